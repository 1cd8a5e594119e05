//go:build linux && cgo

package jailer

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"wsh/config"
	"wsh/internal/launch"
)

// systemDirs are directories that are never a home to put an overlay over.
var systemDirs = map[string]bool{
	"/": true, "/etc": true, "/usr": true, "/bin": true, "/sbin": true, "/lib": true, "/lib32": true,
	"/lib64": true, "/libx32": true, "/boot": true, "/var": true, "/opt": true, "/srv": true,
	"/proc": true, "/sys": true, "/dev": true, "/run": true,
}

// planHome decides whether the jail's $HOME is a copy-on-write home, and
// from where. It returns the plan, whose Home is set whenever $HOME is a
// directory, and, when the jail is not to get it, why not; failed says the
// home was to be copy-on-write and cannot be (which the first command
// says), as opposed to a home that is not one to cover. The state
// directory is resolved where it exists: it is hidden from every jail and
// from the shell's own operations.
func planHome(cfg config.Config, environ, writable []string) (plan launch.HomePlan, why string, failed bool) {
	home, _ := lookupEnvOK(environ, "HOME")
	if home == "" || !filepath.IsAbs(home) {
		return plan, "HOME is not set to an absolute path", false
	}
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		return plan, "HOME (" + home + ") cannot be resolved: " + unwrapErrno(err).Error(), false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return plan, "HOME (" + home + ") is not a directory", false
	}
	plan.Home, plan.State = real, resolveExisting(stateDir(environ, real))
	switch {
	case systemDirs[real]:
		return plan, "HOME is " + real + ", a system directory", false
	case cfg.Home == config.HomeReadonly:
		return plan, "WSH_HOME=readonly", false
	}
	for _, w := range writable {
		if under(real, w) {
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
		if under(state, w) || under(w, state) {
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

// makeState makes the plan's state directory and resolves its path; a
// path that resolves into a writable path once made (a symlink changed
// since planHome) is refused.
func makeState(plan launch.HomePlan, writable []string) (launch.HomePlan, error) {
	if err := os.MkdirAll(plan.State, 0o700); err != nil {
		return plan, fmt.Errorf("wsh's state directory: %w", err)
	}
	r, err := filepath.EvalSymlinks(plan.State)
	if err != nil {
		return plan, fmt.Errorf("wsh's state directory: %w", err)
	}
	if why := stateInWritable(r, writable); why != "" {
		return plan, errors.New(why)
	}
	plan.State = r
	return plan, nil
}

// stateDir is wsh's own state directory: $XDG_STATE_HOME/wsh, or
// ~/.local/state/wsh (XDG: a relative XDG_STATE_HOME is ignored).
func stateDir(environ []string, home string) string {
	if x, _ := lookupEnvOK(environ, "XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "wsh")
	}
	return filepath.Join(home, ".local", "state", "wsh")
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
	plan, why, _ = planHome(cfg, environ, w)
	if why == "" {
		if p, err := makeState(plan, w); err != nil {
			why = err.Error()
		} else {
			plan = p
		}
	}
	return plan, why, nil
}

// hostMountsBeneath lists the mount points of this process's mount
// namespace that lie beneath home, outermost only, leaving out those in a
// writable path (whose binds carry them): an overlay shows none of them,
// so the jail binds them again on top of it.
func hostMountsBeneath(home string, writable []string) []string {
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
			if q != p && under(p, q) {
				keep = false
			}
		}
		for _, w := range writable {
			if p == w {
				keep = false
			}
		}
		if keep && !contains(out, p) {
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

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
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

// existingStates lists the plan's state directory and the default one in
// the home (~/.local/state/wsh, the layers of runs without this
// XDG_STATE_HOME), those that exist.
func existingStates(plan launch.HomePlan) []string {
	candidates := []string{plan.State}
	if plan.Home != "" {
		candidates = append(candidates, stateDir(nil, plan.Home))
	}
	var out []string
	for _, s := range candidates {
		if s == "" || contains(out, s) {
			continue
		}
		if _, err := os.Lstat(s); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		out = append(out, s)
	}
	return out
}
