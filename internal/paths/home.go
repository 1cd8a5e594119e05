//go:build linux && cgo

package paths

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/config"
	"wsh/internal/launch"
	"wsh/internal/proto"
)

// systemDirs are directories that are never a home to put an overlay over.
var systemDirs = map[string]bool{
	"/": true, "/etc": true, "/usr": true, "/bin": true, "/sbin": true, "/lib": true, "/lib32": true,
	"/lib64": true, "/libx32": true, "/boot": true, "/var": true, "/opt": true, "/srv": true,
	"/proc": true, "/sys": true, "/dev": true, "/run": true,
}

// PlanHome decides whether the jail's $HOME is a copy-on-write home, and
// from where. It returns the plan, whose Home is set whenever $HOME is a
// directory, and, when the jail is not to get it, why not; failed says the
// home was to be copy-on-write and cannot be (which the first command
// says), as opposed to a home that is not one to cover. The state
// directory is resolved where it exists: it is hidden from every jail and
// from the shell's own operations.
func PlanHome(cfg config.Config, environ, writable []string) (plan launch.HomePlan, why string, failed bool) {
	home, _ := LookupEnv(environ, "HOME")
	if home == "" || !filepath.IsAbs(home) {
		return plan, "HOME is not set to an absolute path", false
	}
	real, owner, why := homeDir(home)
	if why != "" {
		return plan, why, cfg.Home != config.HomeReadonly
	}
	plan.Home, plan.State = real, resolveExisting(stateDir(environ, real))
	switch {
	case systemDirs[real]:
		return plan, "HOME is " + real + ", a system directory", false
	case cfg.Home == config.HomeReadonly:
		return plan, "WSH_HOME=readonly", false
	case owner != os.Getuid():
		// Another user's home (sudo and setpriv keep HOME=/root): its
		// layers would be kept in a home this uid does not own, and the
		// overlay's root would not be the home's owner's.
		return plan, fmt.Sprintf("HOME (%s) belongs to uid %d, not to uid %d", home, owner, os.Getuid()), true
	}
	for _, w := range writable {
		if Under(real, w) {
			return plan, "the home is writable: it lies in the writable path " + w, false
		}
	}
	if why := stateInWritable(plan.State, writable); why != "" {
		return plan, why, true
	}
	if m := mountBeneath(real); m != "" && os.Getuid() != 0 {
		return plan, "a file system is mounted beneath the home (" + m + "): the kernel does not let a user " +
			"other than root put an overlay over a directory with a mount beneath it", true
	}
	return plan, "", false
}

// homeDir resolves home, a directory, and returns its owner; or why it is
// not one to cover.
func homeDir(home string) (real string, owner int, why string) {
	real, err := filepath.EvalSymlinks(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", 0, "HOME (" + home + ") does not exist"
	case err != nil:
		return "", 0, "HOME (" + home + ") cannot be resolved: " + proto.UnwrapErrno(err).Error()
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return "", 0, "HOME (" + home + ") cannot be read: " + proto.UnwrapErrno(err).Error()
	case !fi.IsDir():
		return "", 0, "HOME (" + home + ") is not a directory"
	}
	return real, int(fi.Sys().(*syscall.Stat_t).Uid), ""
}

// mountBeneath returns a mount point of this process's mount namespace that
// lies beneath dir, or "".
func mountBeneath(dir string) string {
	for _, p := range mountPoints() {
		if strings.HasPrefix(p, dir+"/") {
			return p
		}
	}
	return ""
}

// stateInWritable says why the state directory cannot be used when it
// lies in a writable path or holds one, else "": commands could change
// the layers (and the keeper's locks) there directly, on the host.
func stateInWritable(state string, writable []string) string {
	for _, w := range writable {
		if Under(state, w) || Under(w, state) {
			return "wsh's state directory " + state + " lies in the writable path " + w +
				", where commands could change it: set XDG_STATE_HOME to a directory outside the writable paths"
		}
	}
	return ""
}

// resolveExisting resolves the symlinks of p's deepest existing ancestor
// (p itself when it exists) and joins the rest: a state directory still to
// be made, beneath a symlink to a writable path, is in that path.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// MakeState makes the state directory where this uid can: the first of
// stateDirs that it can make, or finds, as a directory of its own that no
// other uid can write. One that lies in a writable path, or resolves into
// one once made (a symlink changed since PlanHome), is refused, not passed
// over: commands could change the layers there.
func MakeState(plan launch.HomePlan, environ, writable []string) (launch.HomePlan, error) {
	var first error
	for _, d := range stateDirs(environ, plan.Home) {
		r, err := makeStateAt(d, writable)
		if err == nil {
			plan.State = r
			return plan, nil
		}
		if _, inWritable := err.(stateWritableError); inWritable {
			return plan, err
		}
		if first == nil {
			first = fmt.Errorf("wsh's state directory: %w", err)
		}
	}
	return plan, first
}

// stateWritableError is a state directory in a writable path.
type stateWritableError string

func (e stateWritableError) Error() string { return string(e) }

// makeStateAt makes the state directory dir, and returns its resolved
// path once checked.
func makeStateAt(dir string, writable []string) (string, error) {
	if why := stateInWritable(resolveExisting(dir), writable); why != "" {
		return "", stateWritableError(why)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if why := stateInWritable(r, writable); why != "" {
		return "", stateWritableError(why)
	}
	return r, checkPrivate(r)
}

// checkPrivate checks that dir (resolved) is a directory of this uid
// that no other uid can write: opened without following a symlink, and
// checked on what was opened.
func checkPrivate(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: dir, Err: err}
	}
	if int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of uid %d that only it can write (uid %d, mode %#o)", dir, os.Getuid(), st.Uid, st.Mode&0o7777)
	}
	return nil
}

// stateDir is wsh's own state directory: $XDG_STATE_HOME/wsh, or
// ~/.local/state/wsh (XDG: a relative XDG_STATE_HOME is ignored).
func stateDir(environ []string, home string) string {
	if x, _ := LookupEnv(environ, "XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "wsh")
	}
	return filepath.Join(home, ".local", "state", "wsh")
}

// stateDirs are where wsh's state directory may be, in order: stateDir,
// then ~/.local/state/wsh, then $XDG_RUNTIME_DIR/wsh (the XDG runtime
// directory is the user's own, mode 0700; what is kept there is lost at
// logout). There is no place in /tmp: /tmp is writable in every jail.
func stateDirs(environ []string, home string) []string {
	var out []string
	add := func(d string) {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if x, _ := LookupEnv(environ, "XDG_STATE_HOME"); filepath.IsAbs(x) {
		add(filepath.Join(x, "wsh"))
	}
	if home != "" {
		add(filepath.Join(home, ".local", "state", "wsh"))
	}
	if x, _ := LookupEnv(environ, "XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		if r, err := filepath.EvalSymlinks(x); err == nil && checkPrivate(r) == nil {
			add(filepath.Join(r, "wsh"))
		}
	}
	return out
}

// HomePlan says where the jail's copy-on-write home comes from, and, when
// the jail does not get it (the home is the host's, read-only, or
// writable when it lies in a writable path), why not. Its Home is set
// whenever $HOME is a directory, so that wsh home can show and reset
// what an earlier run kept.
func HomePlan(cfg config.Config, dir string, environ []string) (plan launch.HomePlan, why string, err error) {
	w, err := writablePaths(cfg, dir, environ)
	if err != nil {
		return plan, "", err
	}
	plan, why, _ = PlanHome(cfg, environ, w)
	plan.Project, plan.Scope = ProjectOf(dir, w, cfg)
	if why == "" {
		if p, err := MakeState(plan, environ, w); err != nil {
			why = err.Error()
		} else {
			plan = p
		}
	}
	return plan, why, nil
}

// HostMountsBeneath lists the mount points of this process's mount
// namespace that lie beneath home, outermost only, leaving out those in a
// writable path (whose binds carry them): an overlay shows none of them,
// so the jail binds them again on top of it.
func HostMountsBeneath(home string, writable []string) []string {
	var points []string
	for _, p := range mountPoints() {
		if strings.HasPrefix(p, home+"/") {
			points = append(points, p)
		}
	}
	var out []string
	for _, p := range points {
		keep := true
		for _, q := range append(append([]string(nil), points...), writable...) {
			if q != p && Under(p, q) {
				keep = false
			}
		}
		for _, w := range writable {
			if p == w {
				keep = false
			}
		}
		if keep && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// mountPoints lists the mount points of this process's mount namespace.
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 5 {
			out = append(out, unescapeMountinfo(fields[4]))
		}
	}
	return out
}

// unescapeMountinfo decodes mountinfo's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ExistingStates lists the plan's state directory and the others it may
// be in (stateDirs: the layers of runs with another XDG_STATE_HOME, or
// from before a fallback), those that exist. One this uid cannot look up
// (in another user's home) is left out: the commands, of this uid and
// with no capability over the host's files, cannot reach it either.
func ExistingStates(environ []string, plan launch.HomePlan) []string {
	var out []string
	for _, s := range append([]string{plan.State}, stateDirs(environ, plan.Home)...) {
		if s == "" || slices.Contains(out, s) {
			continue
		}
		if _, err := os.Lstat(s); errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EACCES) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ProjectOf is the layer of the copy-on-write home that a run started in
// dir keeps what its commands write there (but for the shared caches):
// project is the start directory, resolved, with its identity (device
// and inode: a directory made again at the path is another project), and
// scope is what the run's commands may do: its writable paths, network,
// hidden and protected paths and unix sockets. A run that may do less (started in a subdirectory, without
// WSH_WRITABLE, without the network) so plants nothing that a run that
// may do more runs (the fourth review: a .pth left by a run in proj/sub
// wrote proj/direct from a later run in proj). No search upward: a .git
// planted above the start directory would make one project of many.
func ProjectOf(dir string, writable []string, cfg config.Config) (project, scope string) {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	project = filepath.Clean(dir)
	sorted := func(l []string) string {
		l = slices.Clone(l)
		slices.Sort(l)
		return strings.Join(l, ":")
	}
	// Every setting that lets a command do more (the review of the
	// whole: a .pth planted under WSH_HIDE read the hidden file in a run
	// without it).
	scope = fmt.Sprintf("writable %s; network %s; allow %s; deny %s; hide %s; protect %s; unix sockets %s",
		sorted(writable), cfg.Network, sorted(cfg.AllowHosts), sorted(cfg.DenyHosts), sorted(cfg.Hide),
		sorted(cfg.Protect), cfg.UnixSockets)
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, project, 0, unix.STATX_INO|unix.STATX_BTIME, &stx) == nil {
		// The birth time too: a file system gives a removed
		// directory's inode number to the next one made.
		scope = fmt.Sprintf("%s; directory %d:%d:%d:%d:%d.%d", scope, stx.Dev_major, stx.Dev_minor, stx.Ino,
			stx.Mask&unix.STATX_BTIME, stx.Btime.Sec, stx.Btime.Nsec)
	}
	return project, scope
}
