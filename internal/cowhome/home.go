//go:build linux && cgo

package cowhome

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/paths"
	"wsh/internal/proto"
)

// Status says what the jail's $HOME is.
type Status struct {
	// Overlay is true when jails get the copy-on-write home.
	Overlay bool
	// Home is the host's home directory ($HOME, resolved), if any.
	Home string
	// State is wsh's state directory, where the copy-on-write home keeps
	// what commands write to it.
	State string
	// Why says why the home is not an overlay, when it is not.
	Why string
	// Absent is true when $HOME does not exist: the jail has no home.
	Absent bool
}

// Home is a Jailer's copy-on-write home; its zero value gives none.
type Home struct {
	mu      sync.Mutex
	conn    *launch.Home // the keeper's connection, held until Close
	active  bool         // jails get the home
	id      proto.PathID
	mounts  []string // the host's mounts beneath the home
	status  Status
	planned bool // the home was to be an overlay: its failure is said
	said    bool
	warn    io.Writer
}

// Setup connects to the keeper of the plan's home (starting it); writable
// are the jail's writable paths, warn where its notes go. What fails leaves the
// home read-only, as it was before there was a copy-on-write home, and is
// said once, with the first command. It returns the home's path when
// jails get it, else "".
func (h *Home) Setup(plan launch.HomePlan, environ []string, why string, failed bool, writable []string, warn io.Writer) string {
	h.warn = warn
	h.status = Status{Home: plan.Home, State: plan.State, Why: why, Absent: plan.Home == "" && homeMissing(environ)}
	h.planned = failed
	if plan.Home == "" || why != "" {
		return ""
	}
	h.planned = true
	id, err := proto.NewPathID(plan.Home)
	if err != nil {
		h.status.Why = err.Error()
		return ""
	}
	conn, err := launch.OpenHome(plan)
	if err != nil {
		h.status.Why = err.Error()
		// The host refuses the keeper's namespaces as it will the
		// jail's: the ladder says so, and no lower rung has a
		// copy-on-write home (WSH_HOME=cow still fails, requireHome).
		h.planned = !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES)
		return ""
	}
	h.mounts = paths.HostMountsBeneath(plan.Home, writable)
	// The keeper gives a clone of the home now, or no jail would get one.
	c, err := conn.Clone()
	if err != nil {
		conn.Release()
		h.status.Why = err.Error()
		return ""
	}
	c.Close()
	h.conn, h.id, h.active, h.status.Overlay = conn, id, true, true
	if names := launch.EarlierUnsaid(plan); len(names) > 0 {
		fmt.Fprintf(warn, "wsh: the jail's home now keeps a layer per project: what jails wrote to it before (%s) "+
			"is kept in %s, and no jail sees it now; wsh home shows it, wsh home reset removes it\n",
			strings.Join(names, ", "), plan.Shared().Upper())
	}
	return plan.Home
}

// Attach gives req the copy-on-write home: a clone of its mount, and
// the lock of that mount, which the jail init holds for its life. It
// returns what to close once the jail has them.
func (h *Home) Attach(req *launch.Request) (done func()) {
	h.mu.Lock()
	conn, active := h.conn, h.active
	h.mu.Unlock()
	if !active {
		return func() {}
	}
	c, err := conn.Clone()
	if err != nil {
		h.Stop("from now on: " + err.Error())
		return func() {}
	}
	req.Spec.Home, req.Spec.HomeMounts = h.id, h.mounts
	req.HomeMount, req.HomeLock = c.Mount, c.Lock
	return c.Close
}

// Stop stops giving jails the copy-on-write home, for why. The
// shell's own view of it stays, and with it the connection and its lock:
// jails that still run have the home, and the shell's operations stay
// consistent with them.
func (h *Home) Stop(why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active {
		h.active, h.status.Overlay, h.status.Why = false, false, why
	}
}

// Release lets go of the home: the shell's view and the keeper's
// connection (jail inits that still run hold their clones' locks). A
// Jailer that runs commands unsandboxed releases it at once: its commands
// see the host's home, and so must the shell.
func (h *Home) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		h.conn.Release()
		h.conn = nil
	}
	h.active, h.status.Overlay = false, false
}

// Status says what the jail's home is.
func (h *Home) Status() Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

// Notice says, once, that the home was to be copy-on-write and is
// not: the jail is in force, but writes to the home fail.
func (h *Home) Notice() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.planned || h.said || h.status.Overlay || h.status.Why == "" {
		return
	}
	h.said = true
	what := "the jail's home is read-only"
	if h.status.Absent {
		what = "the jail has no home"
	}
	fmt.Fprintf(h.warn, "wsh: %s: %s; WSH_HOME=readonly says so without this note, WSH_HOME=cow makes it an error\n", what, h.status.Why)
}

// Missing is why WSH_HOME=cow fails a Jailer whose commands, on rung, do
// not get the copy-on-write home (nil when they get it).
func (h *Home) Missing(rung degrade.Rung) error {
	hs := h.Status()
	if hs.Overlay {
		return nil
	}
	why := hs.Why
	if rung != degrade.RungFull {
		why = "the host refuses the full jail, and the " + rung.String() + " rung has no copy-on-write home"
	}
	return errors.New("WSH_HOME=cow requires a copy-on-write home, and there is none: " + why)
}

// homeMissing says that $HOME names nothing: the jail has no home.
func homeMissing(environ []string) bool {
	home := ""
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "HOME" {
			home = v // the last one, as lookupEnvOK
		}
	}
	if !filepath.IsAbs(home) {
		return false
	}
	_, err := os.Lstat(home)
	return errors.Is(err, fs.ErrNotExist)
}
