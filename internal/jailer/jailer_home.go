//go:build linux && cgo

package jailer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/paths"
	"wsh/internal/proto"
)

// HomeStatus says what the jail's $HOME is.
type HomeStatus struct {
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

// jailHome is a Jailer's copy-on-write home.
type jailHome struct {
	mu      sync.Mutex
	conn    *launch.Home // the keeper's connection, held until Close
	active  bool         // jails get the home
	id      proto.PathID
	mounts  []string // the host's mounts beneath the home
	status  HomeStatus
	planned bool // the home was to be an overlay: its failure is said
	said    bool
}

// setupHome connects to the keeper of the plan's home (starting it). What fails leaves the
// home read-only, as it was before there was a copy-on-write home, and is
// said once, with the first command.
func (j *Jailer) setupHome(plan launch.HomePlan, environ []string, why string, failed bool) {
	h := &j.home
	h.status = HomeStatus{Home: plan.Home, State: plan.State, Why: why, Absent: plan.Home == "" && homeMissing(environ)}
	h.planned = failed
	if plan.Home == "" || why != "" {
		return
	}
	h.planned = true
	id, err := proto.NewPathID(plan.Home)
	if err != nil {
		h.status.Why = err.Error()
		return
	}
	conn, err := launch.OpenHome(plan)
	if err != nil {
		h.status.Why = err.Error()
		// The host refuses the keeper's namespaces as it will the
		// jail's: the ladder says so, and no lower rung has a
		// copy-on-write home (WSH_HOME=cow still fails, requireHome).
		h.planned = !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES)
		return
	}
	h.mounts = paths.HostMountsBeneath(plan.Home, j.writable)
	// The keeper gives a clone of the home now, or no jail would get one.
	c, err := conn.Clone()
	if err != nil {
		conn.Release()
		h.status.Why = err.Error()
		return
	}
	c.Close()
	j.hiding.HomePath = plan.Home
	h.conn, h.id, h.active, h.status.Overlay = conn, id, true, true
	if names := launch.EarlierUnsaid(plan); len(names) > 0 {
		fmt.Fprintf(j.warn, "wsh: the jail's home now keeps a layer per project: what jails wrote to it before (%s) "+
			"is kept in %s, and no jail sees it now; wsh home shows it, wsh home reset removes it\n",
			strings.Join(names, ", "), plan.Shared().Upper())
	}
}

// attachHome gives req the copy-on-write home: a clone of its mount, and
// the lock of that mount, which the jail init holds for its life. It
// returns what to close once the jail has them.
func (j *Jailer) attachHome(req *launch.Request) (done func()) {
	h := &j.home
	h.mu.Lock()
	conn, active := h.conn, h.active
	h.mu.Unlock()
	if !active {
		return func() {}
	}
	c, err := conn.Clone()
	if err != nil {
		j.stopHome("from now on: " + err.Error())
		return func() {}
	}
	req.Spec.Home, req.Spec.HomeMounts = h.id, h.mounts
	req.HomeMount, req.HomeLock = c.Mount, c.Lock
	return c.Close
}

// stopHome stops giving jails the copy-on-write home, for why. The
// shell's own view of it stays, and with it the connection and its lock:
// jails that still run have the home, and the shell's operations stay
// consistent with them.
func (j *Jailer) stopHome(why string) {
	h := &j.home
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active {
		h.active, h.status.Overlay, h.status.Why = false, false, why
	}
}

// releaseHome lets go of the home: the shell's view and the keeper's
// connection (jail inits that still run hold their clones' locks). A
// Jailer that runs commands unsandboxed releases it at once: its commands
// see the host's home, and so must the shell.
func (j *Jailer) releaseHome() {
	h := &j.home
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		h.conn.Release()
		h.conn = nil
	}
	h.active, h.status.Overlay = false, false
}

// Home says what the jail's home is.
func (j *Jailer) Home() HomeStatus {
	j.home.mu.Lock()
	defer j.home.mu.Unlock()
	return j.home.status
}

// noticeHome says, once, that the home was to be copy-on-write and is
// not: the jail is in force, but writes to the home fail.
func (j *Jailer) noticeHome() {
	h := &j.home
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
	fmt.Fprintf(j.warn, "wsh: %s: %s; WSH_HOME=readonly says so without this note, WSH_HOME=cow makes it an error\n", what, h.status.Why)
}

// requireHome fails the Jailer when WSH_HOME=cow and its commands do not
// get the copy-on-write home: no command runs (exit 126). A jail refused
// below WSH_REQUIRE_SANDBOX's floor is left to fail each command closed.
func (j *Jailer) requireHome() {
	if j.cfg.Home != config.HomeCow || j.startFailure != nil {
		return
	}
	if _, refused := j.state.Refused(); refused {
		return
	}
	hs := j.Home()
	if hs.Overlay {
		return
	}
	why := hs.Why
	if j.rung != degrade.RungFull {
		why = "the host refuses the full jail, and the " + j.rung.String() + " rung has no copy-on-write home"
	}
	v := degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepHome,
		Err: errors.New("WSH_HOME=cow requires a copy-on-write home, and there is none: " + why)}
	j.startFailure = &v
}

// homeMissing says that $HOME names nothing: the jail has no home.
func homeMissing(environ []string) bool {
	home, _ := lookupEnvOK(environ, "HOME")
	if !filepath.IsAbs(home) {
		return false
	}
	_, err := os.Lstat(home)
	return errors.Is(err, fs.ErrNotExist)
}
