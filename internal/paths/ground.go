//go:build linux && cgo

package paths

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"wsh/config"
)

// A run starts on real ground: wsh makes its start directory, $TMPDIR and
// the WSH_WRITABLE paths writable, and makes its placeholders in them, so
// it first checks that none of them was laid by an earlier run's command.
// A command can write only in its run's writable paths (the home is
// copy-on-write), so it can rename a project away and leave a symlink in
// its place (to ~/.cargo/bin, say) only in a directory that could have
// been one: /tmp, /var/tmp, $TMPDIR, a WSH_WRITABLE path, or any
// directory wsh would make writable as a start directory, which is every
// directory but the system's, the home itself and the ones above it. A
// symlink there, on the way to a writable path, is refused; a symlink the
// user keeps in the home itself (~/work -> /data/work), in / or in a
// system directory is not. And whatever the path resolves to, it must not
// be a directory the host runs programs from (a directory of PATH, the
// home's tool directories), nor hold one of the home's.

// Ground is what the check needs to know of the host, resolved once.
type Ground struct {
	home     string   // resolved, or ""
	shared   []string // /tmp, /var/tmp and $TMPDIR, resolved
	writable []string // WSH_WRITABLE, resolved
	pathDirs []string // the absolute directories of PATH, resolved
	homeCode []string // the home's tool directories, as named and resolved
}

// homeCodeDirs are the tool directories of the home, whose programs the
// host runs: PATH usually lists them, or will once they exist (a profile
// adds ~/.local/bin and ~/bin then). The startup files and directories
// (~/.config/systemd, ~/.ssh) are protected names instead (the protector's):
// wsh may start in ~/.config.
var homeCodeDirs = []string{".cargo/bin", "go/bin", ".local/bin", "bin"}

// NewGround resolves what the check of the ground needs to know of the
// host, from environ and the writable paths (resolved).
func NewGround(environ, writable []string) Ground {
	g := Ground{writable: writable}
	env := func(k string) string { v, _ := LookupEnv(environ, k); return v }
	addReal := func(l *[]string, p string) {
		if filepath.IsAbs(p) {
			if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(*l, r) {
				*l = append(*l, r)
			}
		}
	}
	for _, t := range []string{"/tmp", "/var/tmp", env("TMPDIR")} {
		addReal(&g.shared, t)
	}
	for _, d := range filepath.SplitList(env("PATH")) {
		addReal(&g.pathDirs, d)
	}
	if h := env("HOME"); filepath.IsAbs(h) {
		g.home, _ = filepath.EvalSymlinks(h)
		dirs := homeCodeDirs
		if systemDirs[g.home] || systemDirs[filepath.Clean(h)] {
			dirs = nil // HOME=/: its bin is the system's
		}
		for _, d := range dirs {
			for _, base := range []string{filepath.Clean(h), g.home} {
				if base != "" && !slices.Contains(g.homeCode, filepath.Join(base, d)) {
					g.homeCode = append(g.homeCode, filepath.Join(base, d))
				}
			}
			addReal(&g.homeCode, filepath.Join(h, d))
		}
	}
	addReal(&g.homeCode, env("GOBIN"))
	if c := env("CARGO_HOME"); c != "" {
		addReal(&g.homeCode, filepath.Join(c, "bin"))
	}
	for _, d := range filepath.SplitList(env("GOPATH")) {
		addReal(&g.homeCode, filepath.Join(d, "bin"))
	}
	return g
}

// CheckReal returns a *config.GroundError when p, the path named what, is not
// ground to start on; nil when it is, or when it cannot be resolved (then
// no second resolution is made of it: WritableAndWhy). byDefault says p is writable only
// when wsh would choose it (the start directory, $TMPDIR): one it would
// not choose (a system directory, the home) is not made writable, so it
// is not checked for what it holds.
//
// It returns p resolved by the walk that was checked ("" where p cannot be
// resolved): the caller makes that writable, not a second resolution.
func (g Ground) CheckReal(what, p string, byDefault bool) (string, error) {
	links, real, err := linksOn(p)
	if err != nil {
		return "", nil
	}
	return real, g.checkLinks(what, p, links, real, byDefault)
}

// Home is the home directory, resolved, or "".
func (g Ground) Home() string { return g.home }

func (g Ground) checkLinks(what, p string, links []link, real string, byDefault bool) error {
	for _, l := range links {
		if in := g.jailWritable(filepath.Dir(l.at)); in != "" {
			return &config.GroundError{What: what, Path: p, Why: "goes through the symlink " + l.at + " (-> " + l.to + "), which lies in " +
				in + ", where a jailed command can make one; wsh never makes a path writable through a symlink a command could have made"}
		}
	}
	if byDefault && NotWritableByDefault(real, g.home) != "" {
		return nil
	}
	if why := g.runsPrograms(real); why != "" {
		if real != p {
			why = "resolves to " + real + ", which " + why
		}
		return &config.GroundError{What: what, Path: p, Why: why + "; wsh never makes writable a directory the host runs programs from"}
	}
	return nil
}

// jailWritable says where dir, a resolved directory, lies that a jailed
// command of some run could write, or "".
func (g Ground) jailWritable(dir string) string {
	in := func(root, what string) string {
		if dir == root {
			return root + ", " + what
		}
		return dir + " (in " + root + ", " + what + ")"
	}
	for _, s := range g.shared {
		if Under(dir, s) {
			return in(s, "a temporary directory")
		}
	}
	for _, w := range g.writable {
		if Under(dir, w) {
			return in(w, "named in WSH_WRITABLE")
		}
	}
	if NotWritableByDefault(dir, g.home) == "" {
		return dir + ", a directory a run started in it makes writable"
	}
	return ""
}

// runsPrograms says why real, a resolved path, is where the host runs
// programs from, or "".
func (g Ground) runsPrograms(real string) string {
	in := func(d, what string) string {
		if real == d {
			return "is " + what
		}
		return "lies in " + d + ", " + what
	}
	for _, d := range g.pathDirs {
		if d != "/" && (g.home == "" || !Under(g.home, d)) && Under(real, d) {
			return in(d, "a directory of PATH")
		}
	}
	for _, d := range g.homeCode {
		switch {
		case Under(real, d):
			return in(d, "a tool directory of the home")
		case Under(d, real) && (g.home == "" || !Under(g.home, real)):
			// The home itself, named in WSH_WRITABLE, is the user's
			// choice of a writable home, tool directories and all.
			return "holds " + d + ", a tool directory of the home"
		}
	}
	return ""
}

// A link is a symlink met on the way to a path: where it is (its
// directory resolved) and what it holds.
type link struct{ at, to string }

// linksOn resolves p, an absolute path, as the kernel would, and returns
// every symlink it goes through, in order, and the resolved path.
func linksOn(p string) (links []link, real string, err error) {
	if !filepath.IsAbs(p) {
		return nil, "", errors.New(p + " is not absolute")
	}
	rest, cur := strings.Split(p, "/"), "/"
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return nil, "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if len(links) == 255 {
			return nil, "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
		}
		to, err := os.Readlink(next)
		if err != nil {
			return nil, "", err
		}
		links = append(links, link{next, to})
		if filepath.IsAbs(to) {
			cur = "/"
		}
		rest = append(strings.Split(to, "/"), rest...)
	}
	return links, cur, nil
}

// CheckGround checks the start directory dir, $TMPDIR and the WSH_WRITABLE
// paths, and returns the start directory's and $TMPDIR's resolutions as
// checked, by the path as given: the caller makes writable what was
// checked, not a second resolution, which a command of another run could
// have changed in between (a directory swapped for a symlink and back).
// given is cfg.Writable as the caller gave it, resolved is cfg.Writable
// validated (the same entries, in order); WSH_WRITABLE as environ spells
// it is checked too where it is what cfg holds (config.Load has resolved
// it). A WSH_WRITABLE path that resolves now to another path than it did
// when it was validated changed as wsh started: refused. Whatever its
// spelling, each path made writable must not be where the host runs
// programs from.
func CheckGround(given, resolved []string, dir string, environ []string) (map[string]string, error) {
	g := NewGround(environ, resolved)
	real := map[string]string{}
	r, err := g.CheckReal("the start directory", dir, true)
	if err != nil {
		return nil, err
	}
	real[dir] = r
	if t, _ := LookupEnv(environ, "TMPDIR"); t != "" {
		if r, err = g.CheckReal("TMPDIR", t, true); err != nil {
			return nil, err
		}
		real[t] = r
	}
	// As spelled in the environment first (config.Load gave cfg
	// resolved: the spelling names the symlink). An embedder's cfg need
	// not be the environment's, so a spelling that leads elsewhere is not
	// cfg's, and is passed over; cfg's own paths are checked below, where
	// they lead, whatever their spelling.
	env, _ := LookupEnv(environ, "WSH_WRITABLE")
	for _, p := range filepath.SplitList(env) {
		if r, err := filepath.EvalSymlinks(p); err == nil && slices.Contains(resolved, r) {
			if err := g.checkWritable(p, r, false); err != nil {
				return nil, err
			}
		}
	}
	for i, p := range given {
		if i >= len(resolved) {
			break
		}
		if err := g.checkWritable(p, resolved[i], true); err != nil {
			return nil, err
		}
	}
	return real, nil
}

// checkWritable checks the WSH_WRITABLE path p, which resolved to
// resolved when it was validated. strict: p is that very entry, so if it
// leads elsewhere now it changed as wsh started, and is refused.
func (g Ground) checkWritable(p, resolved string, strict bool) error {
	links, now, err := linksOn(p)
	if err != nil || now != resolved {
		if !strict {
			return nil
		}
		return &config.GroundError{What: "the WSH_WRITABLE path", Path: p, Why: "resolved to " + resolved +
			" and now does not: it changed as wsh started; wsh never makes writable a path it did not check"}
	}
	return g.checkLinks("the WSH_WRITABLE path", p, links, now, false)
}
