//go:build linux && cgo

package protect

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/paths"
	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// defaultProtected are the paths, relative to each writable path, that the
// jail keeps read-only: what is written there runs on the host later,
// unsandboxed (docs/config.md says why each is here). A repository's own
// (its config, hooks, commondir, and those of its submodules and
// worktrees) are found by gitCandidates.
var defaultProtected = []string{
	".gitconfig", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".bash_aliases", ".bashrc.d", ".ssh",
	".config/fish", ".config/autostart", ".config/systemd", ".config/environment.d", ".local/share/systemd", ".local/bin",
	".gitmodules", ".mcp.json", ".vscode", ".idea", ".claude", ".codex", ".agents", ".cursor", ".gemini",
	".devcontainer", ".devcontainer.json",
	".zed", ".kiro", ".amazonq", ".roo", ".continue", ".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
}

// placeholderNames are the protected names that wsh makes, where they
// are missing in a project (placeholderFor), as an empty directory,
// which it protects: a command cannot make them either. These are the
// names a project's tools act on: editors' and agents' settings,
// .mcp.json, .gitmodules. The names of files too (nameFile): an empty
// directory is what git shows nothing of (an empty file would be listed
// by git status, and added by git add -A in the jail) and what every way
// to make the file is refused at (EISDIR, EEXIST); a program in the jail
// that reads it finds a directory. The home's names (.bashrc, .profile,
// .ssh, .gitconfig) are made only in the home (homePlaceholders): in a
// project nothing runs them, so they would only be more entries in
// every listing of it.
// The names of more than one component (.config/fish) are not made:
// their first directory would be one too.
var placeholderNames = map[string]nameKind{
	".vscode": nameDir, ".idea": nameDir, ".claude": nameDir, ".codex": nameDir, ".agents": nameDir,
	".cursor": nameDir, ".gemini": nameDir, ".devcontainer": nameDir,
	".gitmodules": nameFile, ".mcp.json": nameFile, ".devcontainer.json": nameFile,
	".zed": nameDir, ".kiro": nameDir, ".amazonq": nameDir, ".roo": nameDir, ".continue": nameDir, ".opencode": nameDir,
	"opencode.json": nameFile, "opencode.jsonc": nameFile, ".aider.conf.yml": nameFile,
}

// homePlaceholders are the home's protected names that wsh makes where
// they are missing in a home that lies in a writable path (HOME in /tmp,
// or named in WSH_WRITABLE), where the host's shells, git and ssh read
// them: an empty file, which a shell or git reads as nothing, as it reads
// a missing one; an empty directory for a directory (.ssh 0700, as ssh
// makes it). Not .bash_profile and .bash_login: bash reads only the first
// of them and .profile that exists, so an empty one would keep it from
// reading the user's .profile (one a program on the host writes during
// the run included); a command that makes one is said after it.
var homePlaceholders = map[string]placeholder{
	".bashrc": makeEmptyFile, ".bash_logout": makeEmptyFile, ".bash_aliases": makeEmptyFile,
	".profile": makeEmptyFile, ".zshrc": makeEmptyFile, ".zprofile": makeEmptyFile, ".zshenv": makeEmptyFile,
	".zlogin": makeEmptyFile, ".zlogout": makeEmptyFile, ".gitconfig": makeEmptyFile,
	".bashrc.d": makeDir, ".ssh": makeDir,
}

// placeholderMode is the mode of the placeholder named name: .ssh is
// ssh's own, 0700.
func placeholderMode(name string, dir bool) uint32 {
	switch {
	case name == ".ssh":
		return 0o700
	case dir:
		return 0o755
	}
	return 0o644
}

// A nameKind is what a protected name is, where it is there.
type nameKind int

const (
	nameDir nameKind = iota + 1
	nameFile
)

// A placeholder is what wsh makes where a protected path is missing.
type placeholder int

const (
	makeNone      placeholder = iota
	makeDir                   // an empty directory (.git/hooks, .vscode)
	makeEmptyFile             // an empty file (config.worktree: an empty config)
	makeCommondir             // a commondir naming the gitdir itself: git reads it as none
)

// A candidate is one protected path, as written, with the directory it is
// matched in (the walk pins what lies between) and what wsh makes where it
// is missing.
type candidate struct {
	path, base string
	make       placeholder
}

// Limits past which the protection fails closed: no jail, no write in
// the writable paths, rather than repositories left out.
const (
	maxReposBelow = 1024 // repositories one level below a project root
	maxGitdirs    = 256  // a repository's gitdirs: its own, submodules', worktrees'
)

// A Protection is what the jail does for the protected paths at one
// moment: the directories to pin (Pins), the paths to make read-only
// (Paths).
type Protection struct {
	Pins, Paths []proto.PathID
	seen        map[string]bool // "pin:", "path:", "missing:" or "link:" and the path
	lstat       map[string]lstatResult
	// Missing are the protected paths that are not there and that wsh
	// does not make: a command can make them, and wsh says so after.
	Missing []string
	// Links are the symlinks on the way to a protected path, with their
	// targets: a command can point them elsewhere, and wsh says so after.
	Links map[string]string
	err   error // the first reason the protection cannot be made
	// hidden are the hidden paths, as written and resolved, when the
	// candidates were found: nothing beneath them is protected
	// (protect_hidden.go).
	hidden []string
	// mounts says the jail makes the paths read-only (the full rung):
	// wsh makes the missing ones it makes, and holds what it finds.
	mounts bool
	// Stamps, on the rungs without mounts (where the paths cannot be made
	// read-only), are the protected paths' change stamps before the
	// command (TakeStamps): wsh says after it which changed.
	Stamps map[string]string
	Hollow map[string]bool // which of them were hollow (hollow.go)
}

// Stamp is what changes when a file or a directory's tree changes: the
// inode and ctime (which no unprivileged process can set back) of the
// path and, for a directory, of everything beneath it, symlinks not
// followed. "" for a path that is not there. A tree of more than
// MaxStamped entries is stamped StampTooLarge, which wsh says it cannot
// check.
func Stamp(path string) string {
	var b strings.Builder
	n := 0
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			return
		}
		if n++; n > MaxStamped {
			return
		}
		fmt.Fprintf(&b, "%s=%d:%d.%d\n", p, st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || depth > 64 {
			return
		}
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			walk(p+"/"+e.Name(), depth+1)
		}
	}
	walk(path, 0)
	if n > MaxStamped {
		return StampTooLarge
	}
	return b.String()
}

// MaxStamped bounds what Stamp walks of one protected path.
const MaxStamped = 20000

// StampTooLarge is the Stamp of a tree of more than MaxStamped entries.
const StampTooLarge = "too large"

// TakeStamps notes the stamps of the protected paths.
func (pr *Protection) TakeStamps() {
	pr.Stamps, pr.Hollow = map[string]string{}, map[string]bool{}
	for _, p := range pr.Paths {
		pr.Stamps[p.Path], pr.Hollow[p.Path] = Stamp(p.Path), Hollow(p.Path)
	}
}

// once reports whether key was seen, and notes it.
func (pr *Protection) once(key string) bool {
	if pr.seen[key] {
		return true
	}
	if pr.seen == nil {
		pr.seen = map[string]bool{}
	}
	pr.seen[key] = true
	return false
}

func (pr *Protection) fail(err error) {
	if err != nil && pr.err == nil {
		pr.err = err
	}
}

func (pr *Protection) noteMissing(path string) {
	if !pr.once("missing:" + path) {
		pr.Missing = append(pr.Missing, path)
	}
}

func (pr *Protection) watch(link, target string) {
	if pr.hides(link) {
		return // no command can change it, and its name is not to be said
	}
	if pr.Links == nil {
		pr.Links = map[string]string{}
	}
	pr.Links[link] = target
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// lstatOnce is os.Lstat, once per path in one protection.
func (pr *Protection) lstatOnce(path string) (fs.FileInfo, error) {
	if r, ok := pr.lstat[path]; ok {
		return r.fi, r.err
	}
	fi, err := os.Lstat(path)
	if pr.lstat == nil {
		pr.lstat = map[string]lstatResult{}
	}
	pr.lstat[path] = lstatResult{fi, err}
	return fi, err
}

// add adds path's identity to the pins (pin) or the paths, once. A path
// that is there but whose identity cannot be read fails the protection.
func (pr *Protection) add(path string, pin bool) {
	key := "path:" + path
	if pin {
		key = "pin:" + path
	}
	if pr.once(key) {
		return
	}
	id, err := proto.NewPathID(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			pr.fail(fmt.Errorf("cannot protect %s: %w", path, err))
		}
		return
	}
	if err := linkedElsewhere(path); err != nil {
		pr.fail(err)
		return
	}
	if pin {
		pr.Pins = append(pr.Pins, id)
	} else {
		pr.Paths = append(pr.Paths, id)
	}
}

// linkedElsewhere fails a protected file with another hard link (made by
// a command in the same command as the repository, git init && ln
// .git/config x, or an earlier run's), and a protected directory with
// such a file (a hook): a read-only bind keeps the name, not the file, which a command
// could write through the other link, for the host's git to run. No jail
// rather than one that leaves it writable.
func linkedElsewhere(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil // gone meanwhile: nothing of it to keep
	}
	check := []string{path}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		// Its files, one level down: hooks (of .git/hooks, of a
		// core.hooksPath of any name), a tool's settings. Not git's
		// samples, which it never runs (a dedup tool links them).
		check = check[:0]
		ents, _ := os.ReadDir(path)
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".sample") {
				check = append(check, filepath.Join(path, e.Name()))
			}
		}
	}
	for _, p := range check {
		if unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			return fmt.Errorf("cannot protect %s: it has %d hard links, and a command could write it through another; remove the others, outside wsh (find / -xdev -samefile %s)", p, st.Nlink, p)
		}
	}
	return nil
}

// A Protector knows the protected paths of a Jailer.
type Protector struct {
	roots    []string      // the writable paths, where the protected paths lie
	projects []string      // those where wsh makes missing placeholderNames (not /tmp, $TMPDIR)
	Start    string        // the start directory, resolved, when it is writable; else ""
	names    []string      // relative to each base
	absolute []string      // WSH_PROTECT's absolute paths
	home     string        // the home, resolved: a base when it lies in a writable path
	gitCfg   []string      // the git config files beside a repository's own (system, global)
	ph       *placeholders // what wsh made, and the locks it holds; nil: none made

	// Hidden gives the hidden paths now (nil: none), in which nothing
	// is protected (protect_hidden.go).
	Hidden func() []string

	mu      sync.Mutex
	repos   map[string]repoCache // a project root's subdirectories
	learned []string             // repositories reached through a symlink, kept for the run
}

// repoCache is the list of a directory's subdirectories, as of its mtime
// and ctime, read when they were already older than racyTime: a change
// within the file system's timestamp granularity of the read would not
// show in them.
type repoCache struct {
	mtime, ctime time.Time
	dirs, links  []string
}

// racyTime is how old a directory's times must be for its listing to be
// kept: timestamps have the granularity of a kernel tick.
const racyTime = 100 * time.Millisecond

// reposBelow lists the children of dir that are git repositories (have a
// .git), resolved: a directory of projects (wsh started in ~/src) has
// their .git one level down. The listing of dir is kept while its mtime
// and ctime stay (a child made, removed or renamed changes both; a
// command can set the mtime back, not the ctime); each child's .git is
// looked up every time (git init in an existing child changes nothing of
// dir). A child that is a symlink to a directory counts where it leads.
// More than maxReposBelow is an error: the protection fails closed rather
// than leave some out (a command could make a thousand to hide one).
func (p *Protector) reposBelow(dir string, out *Protection) ([]string, error) {
	dirs, links, err := p.childDirs(dir)
	if err != nil {
		return nil, err
	}
	plain := len(dirs)
	for _, l := range links {
		// A symlinked child is resolved every time, each symlink on the
		// way watched; a repository reached through one is learned: it
		// stays protected when the symlink is pointed elsewhere.
		t, err := p.resolve(l, out)
		if err != nil {
			return nil, err
		}
		if p.rootOf(t) == "" {
			continue
		}
		if fi, err := os.Stat(t); err == nil && fi.IsDir() {
			dirs = append(dirs, t)
		}
	}
	var repos []string
	for _, d := range append(dirs, p.learnedRepos()...) {
		_, err := os.Lstat(filepath.Join(d, ".git"))
		if errors.Is(err, fs.ErrNotExist) && isBare(d) {
			err = nil // a bare repository: remote.git
		}
		if err == nil {
			if !slices.Contains(repos, d) {
				repos = append(repos, d)
			}
		} else if err := p.unlessBenign(err, d); err != nil {
			return nil, err
		}
	}
	for _, r := range repos {
		if !slices.Contains(dirs[:plain], r) {
			p.learnRepo(r)
		}
	}
	if len(repos) > maxReposBelow {
		return nil, fmt.Errorf("%s holds %d repositories, more than the %d whose hooks and config wsh protects; "+
			"start wsh in one of them, or name it in WSH_WRITABLE", dir, len(repos), maxReposBelow)
	}
	return repos, nil
}

// learnedRepos are the repositories reached through a symlink since wsh
// started.
func (p *Protector) learnedRepos() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.learned
}

func (p *Protector) learnRepo(r string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.learned, r) && len(p.learned) < maxReposBelow {
		p.learned = append(p.learned[:len(p.learned):len(p.learned)], r)
	}
}

// childDirs lists dir's subdirectories, and its symlinks (which the
// caller resolves).
func (p *Protector) childDirs(dir string) (dirs, links []string, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil, nil, p.unlessBenign(err, filepath.Dir(dir))
	}
	mtime, ctime := time.Unix(st.Mtim.Unix()), time.Unix(st.Ctim.Unix())
	p.mu.Lock()
	c, ok := p.repos[dir]
	p.mu.Unlock()
	if ok && c.mtime.Equal(mtime) && c.ctime.Equal(ctime) {
		return append([]string(nil), c.dirs...), c.links, nil
	}
	started := time.Now()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, p.unlessBenign(err, dir)
	}
	for _, e := range ents {
		d := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			dirs = append(dirs, d)
		case e.Type()&fs.ModeSymlink != 0:
			links = append(links, d)
		}
	}
	if started.Sub(ctime) > racyTime && started.Sub(mtime) > racyTime {
		p.mu.Lock()
		if p.repos == nil {
			p.repos = map[string]repoCache{}
		}
		p.repos[dir] = repoCache{mtime, ctime, dirs, links}
		p.mu.Unlock()
	}
	return append([]string(nil), dirs...), links, nil
}

// resolve follows path's symlinks as the kernel would, one component at a
// time, and watches each symlink on the way that lies in a writable path
// (a command can point it elsewhere; wsh says so after). Where a
// component is missing, the rest is joined on as written. An error but
// "not there" fails the protection, as unlessBenign says.
func (p *Protector) resolve(path string, out *Protection) (string, error) {
	todo := strings.Split(path, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return filepath.Join(append([]string{next}, todo...)...), nil
		case err != nil:
			return "", p.unlessBenign(err, cur)
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if links++; links > 40 {
			// A loop: nothing on the host can follow it either (ELOOP),
			// so it leads to nothing; if a command points one of its
			// links elsewhere, that is said after.
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", p.unlessBenign(err, cur)
		}
		if p.rootOf(next) != "" {
			out.watch(next, target)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

// NewProtector makes the Protector for the writable paths. projects are
// the start directory and WSH_WRITABLE; extra is WSH_PROTECT; environ
// gives the home and the global git config.
func NewProtector(roots, projects, extra, environ []string) *Protector {
	p := &Protector{roots: roots, names: append([]string(nil), defaultProtected...), ph: newPlaceholders("", nil, nil)}
	tmp := envValue(environ, "TMPDIR")
	if t, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = t
	}
	for _, pr := range projects {
		if pr != "/tmp" && pr != "/var/tmp" && pr != tmp {
			p.projects = append(p.projects, pr)
		}
	}
	for _, e := range extra {
		if filepath.IsAbs(e) {
			p.absolute = append(p.absolute, filepath.Clean(e))
		} else {
			p.names = append(p.names, filepath.Clean(e))
		}
	}
	if h := envValue(environ, "HOME"); filepath.IsAbs(h) {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			p.home = r
		}
	}
	p.gitCfg = globalGitConfigs(environ)
	return p
}

// bases are the directories the protected names are matched in: every
// writable path, the project roots (the start directory), the
// repositories one level below a project root, the home when it lies in a
// writable path, and the working directory dir and each directory above
// it while it lies in a writable path (a repository wsh was not started
// in, but a command works in, or one above the start directory).
func (p *Protector) bases(dir string, pr *Protection) ([]string, error) {
	out := append(append([]string(nil), p.roots...), p.projects...)
	add := func(d string) {
		if !slices.Contains(out, d) && !pr.hides(d) {
			out = append(out, d)
		}
	}
	for _, proj := range p.projects {
		repos, err := p.reposBelow(proj, pr)
		if err != nil {
			return nil, err
		}
		for _, r := range repos {
			add(r)
		}
	}
	if p.home != "" && p.rootOf(p.home) != "" {
		add(p.home)
	}
	if dir != "" {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			dir = d
		}
		for d := dir; p.rootOf(d) != ""; d = filepath.Dir(d) {
			add(d)
			if d == "/" {
				break
			}
		}
	}
	// The submodules that .gitmodules names, at any depth of the working
	// tree: one whose .git is a directory there (git submodule add of an
	// existing clone) is a repository the host's git status goes into.
	n := 0
	for i := 0; i < len(out); i++ {
		if pr.hides(out[i]) {
			continue // a writable path that is hidden: nothing in it is read
		}
		subs, err := gitmodules(filepath.Join(out[i], ".gitmodules"))
		if err != nil {
			return nil, p.unlessBenign(err, out[i])
		}
		for _, sm := range subs {
			d := filepath.Join(out[i], sm.path)
			if !paths.Under(d, out[i]) || d == out[i] || p.rootOf(d) == "" || slices.Contains(out, d) {
				continue
			}
			if n++; n > maxGitdirs {
				return nil, fmt.Errorf("%s names more than %d submodules, whose hooks and config wsh protects", out[i], maxGitdirs)
			}
			add(d)
		}
	}
	return out, nil
}

// candidates are the protected paths beneath the writable paths, for a
// command working in dir, existing or not, by the paths written (not
// resolved).
func (p *Protector) candidates(dir string, pr *Protection) ([]candidate, error) {
	var out []candidate
	seen := map[string]int{}
	pr.hidden = p.hiddenPlaces()
	add := func(c candidate) {
		// Only in the writable paths, and not in a hidden one: wsh
		// protects only where a command can write (protect_hidden.go).
		if p.rootOf(c.path) == "" || pr.hides(c.path) {
			return
		}
		if i, ok := seen[c.path]; ok {
			// The same path from two repositories (a submodule's
			// gitdir, seen from it and from the superproject): what
			// either would make where it is missing is made.
			if out[i].make == makeNone {
				out[i].make = c.make
			}
			return
		}
		seen[c.path] = len(out)
		out = append(out, c)
	}
	bases, err := p.bases(dir, pr)
	if err != nil {
		return nil, err
	}
	global, err := p.globalHooksPath()
	if err != nil {
		return nil, err
	}
	for _, b := range bases {
		if p.rootOf(b) == "" || pr.hides(b) {
			continue
		}
		for _, n := range p.names {
			add(candidate{path: filepath.Join(b, n), base: b, make: p.placeholderFor(n, b, pr)})
		}
		if b == p.home {
			for _, c := range p.homeToolCandidates() {
				add(c)
			}
		}
		gs, err := p.gitCandidates(b, global, pr)
		if err != nil {
			return nil, err
		}
		for _, c := range gs {
			if c.base == "" {
				c.base = p.rootOf(c.path)
			}
			add(c)
		}
	}
	// The config names tools read upward, above the start directory
	// (protect_parents.go).
	for _, c := range p.parentCandidates() {
		add(c)
	}
	// The home's own files where a writable path lies in the home (wsh
	// started in ~/.config or ~/.ssh): matched from the home, not from the
	// writable path, as the host's shells, ssh and systemd read them.
	if p.home != "" && p.rootOf(p.home) == "" {
		for _, n := range p.names {
			add(candidate{path: filepath.Join(p.home, n), base: p.home})
		}
		for _, c := range p.homeToolCandidates() {
			c.make = makeNone
			add(c)
		}
	}
	// The global git configs, where they lie in a writable path (a home
	// in WSH_WRITABLE, XDG_CONFIG_HOME or GIT_CONFIG_GLOBAL in /tmp):
	// each sets core.hooksPath and core.fsmonitor for every repository.
	for _, a := range append(append([]string(nil), p.absolute...), p.gitCfg...) {
		if root := p.rootOf(a); root != "" {
			add(candidate{path: a, base: root})
		}
	}
	return out, nil
}

// placeholderFor is what wsh makes where the protected name n is
// missing in the base b: an empty directory for the default names, in a
// project (the start directory, a WSH_WRITABLE path) and in a
// repository in one (one level below, or one a command works in), but
// not in /tmp, /var/tmp or $TMPDIR, which other users share, nor in a
// directory of a project that is not a repository's, which no editor
// opens as a project (every directory a command works in would get
// them).
func (p *Protector) placeholderFor(n, b string, pr *Protection) placeholder {
	kind := placeholderNames[n]
	switch {
	case b == p.home && homePlaceholders[n] != makeNone:
		return homePlaceholders[n]
	case kind == 0, kind == nameFile && b == p.home:
		return makeNone
	case slices.Contains(p.projects, b):
		return makeDir
	}
	for _, proj := range p.projects {
		if paths.Under(b, proj) {
			if _, err := pr.lstatOnce(filepath.Join(b, ".git")); err == nil {
				return makeDir
			}
			break
		}
	}
	return makeNone
}

// outermostRoot is the shortest writable path that holds path, or "".
func (p *Protector) outermostRoot(path string) string {
	best := ""
	for _, r := range p.roots {
		if paths.Under(path, r) && (best == "" || len(r) < len(best)) {
			best = r
		}
	}
	return best
}

func (p *Protector) rootOf(path string) string {
	best := ""
	for _, r := range p.roots {
		if paths.Under(path, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// gitCandidates are the paths of the repository at base (if it is one)
// that git runs or follows to what it runs: of its gitdir (.git, or the
// directory a .git file names, which is itself protected) and of the
// common directory that gitdir's commondir names, the config,
// config.worktree, hooks and commondir (a commondir sends git to another
// directory's config and hooks); the same for every submodule's gitdir
// beneath modules/, at any depth, and every worktree's beneath
// worktrees/; and the directory core.hooksPath names (with husky's
// .husky, whose hooks the one in .husky/_ runs). Where they are missing in
// a gitdir that is a directory, wsh makes what git reads as nothing: an
// empty hooks directory, an empty config.worktree, and a commondir that
// names the gitdir itself.
func (p *Protector) gitCandidates(base, global string, pr *Protection) ([]candidate, error) {
	gitPath := filepath.Join(base, ".git")
	fi, err := os.Lstat(gitPath)
	var out []candidate
	gitdir := gitPath
	switch {
	case errors.Is(err, fs.ErrNotExist) && isBare(base):
		// A bare repository (a local remote, remote.git, beside the
		// work): its own gitdir, whose hooks a push runs.
		gitdir = base
	case err != nil:
		return nil, p.unlessBenign(err, base)
	case fi.IsDir():
		// One that holds no gitdir is no repository (noGitdir), on the
		// same lstat: another run may make its placeholder there as
		// this one looks. git passes over it: a bare repository with
		// an empty .git (a command's) is still one.
		empty, err := p.noGitdir(gitPath)
		switch {
		case err != nil:
			return nil, err
		case empty && isBare(base):
			gitdir = base
		case empty:
			return nil, nil
		}
	case fi.Mode().IsRegular():
		d, ok := ReadGitFile(gitPath)
		if !ok {
			return nil, nil
		}
		out = append(out, candidate{path: gitPath, base: base})
		gitdir = d
	case fi.Mode()&fs.ModeSymlink != 0:
		// .git a symlink to the gitdir (the repo tool's layout): each
		// symlink on the way is watched, the gitdir protected where it is.
		d, err := p.resolve(gitPath, pr)
		if err != nil {
			return nil, err
		}
		out = append(out, candidate{path: gitPath, base: base})
		gitdir = d
	default:
		return nil, nil
	}
	if !p.mayFollow(gitdir, pr) {
		// A gitdir in a hidden path: covered in every jail, so nothing
		// of it is read, made or bound (protect_hidden.go).
		return out, nil
	}
	n, budget := 0, maxModuleDirs
	localHP := global // core.hooksPath: the repository's own, else the global one
	var addGitdir func(dir string, depth int) error
	count := func() error {
		if n++; n > maxGitdirs {
			return fmt.Errorf("the repository %s has more than %d submodules and worktrees, whose hooks and config wsh protects", base, maxGitdirs)
		}
		return nil
	}
	addGitdir = func(dir string, depth int) error {
		if err := count(); err != nil {
			return err
		}
		if depth > maxGitDepth {
			return fmt.Errorf("the repository %s has submodules nested more than %d deep, whose hooks and config wsh protects", base, maxGitDepth)
		}
		own := makeCommondir
		common := dir
		if c, ok := ReadCommondir(dir); ok {
			own = makeNone // a worktree's: it names the main gitdir
			if p.mayFollow(c, pr) {
				common = c // not a hidden one, covered in every jail
			}
		}
		// git reads config.worktree only with extensions.worktreeConfig,
		// which only the (protected) config sets; but the user's own git
		// sparse-checkout sets it later, on the host, and a config.worktree
		// a command left would then be read: a missing one is made empty.
		wt := makeEmptyFile
		cfg, err := readGitConfig(filepath.Join(common, "config"))
		if err != nil {
			if err := p.unlessBenign(err, common); err != nil {
				return err
			}
		}
		wcfg, err := readGitConfig(filepath.Join(dir, "config.worktree"))
		if err != nil {
			if err := p.unlessBenign(err, dir); err != nil {
				return err
			}
		}
		if depth == 0 {
			if v, ok := cfg["core.hookspath"]; ok {
				localHP = v
			}
			if v, ok := wcfg["core.hookspath"]; ok {
				localHP = v
			}
		}
		out = append(out,
			candidate{path: filepath.Join(dir, "config")},
			candidate{path: filepath.Join(dir, "config.worktree"), make: wt},
			candidate{path: filepath.Join(dir, "hooks"), make: makeDir},
			candidate{path: filepath.Join(dir, "commondir"), make: own})
		out = append(out, p.hookLinks(filepath.Join(dir, "hooks"), pr)...)
		if common != dir {
			out = append(out,
				candidate{path: filepath.Join(common, "config")},
				candidate{path: filepath.Join(common, "config.worktree"), make: wt},
				candidate{path: filepath.Join(common, "hooks"), make: makeDir},
				candidate{path: filepath.Join(common, "commondir"), make: makeCommondir})
			out = append(out, p.hookLinks(filepath.Join(common, "hooks"), pr)...)
		}
		if depth > 0 {
			// A submodule's gitdir: git finds it through the .git file of
			// the submodule's working tree, which core.worktree names.
			if wtree, ok := cfg["core.worktree"]; ok && wtree != "" {
				if !filepath.IsAbs(wtree) {
					wtree = filepath.Join(dir, wtree)
				}
				out = append(out, candidate{path: filepath.Join(filepath.Clean(wtree), ".git")})
			}
		}
		if err := p.eachGitdir(filepath.Join(common, "modules"), &budget, func(d string) error { return addGitdir(d, depth+1) }); err != nil {
			return err
		}
		if depth == 0 && common != dir {
			// A linked worktree's repository: the submodules other
			// branches name (the main worktree's .gitmodules, say) are
			// not known from this one, and a command could plant any of
			// them for the host's git submodule update --init. The
			// modules directory is read-only as a whole (made, empty,
			// where it is missing); a worktree's submodules are set up
			// on the host.
			out = append(out, candidate{path: filepath.Join(common, "modules"), make: makeDir})
		} else if depth == 0 {
			// A submodule .gitmodules names whose gitdir is not there yet
			// (a clone without --recurse-submodules): a command could
			// plant it, and the host's git submodule update --init would
			// take it as it is. The modules directory is then read-only
			// as a whole (made, empty, where it is missing).
			subs, err := gitmodules(filepath.Join(base, ".gitmodules"))
			if err != nil {
				if err := p.unlessBenign(err, base); err != nil {
					return err
				}
			}
			for _, sm := range subs {
				ok, err := p.looksLikeGitdir(filepath.Join(common, "modules", sm.name))
				if err != nil {
					return err
				}
				if !ok {
					out = append(out, candidate{path: filepath.Join(common, "modules"), make: makeDir})
					break
				}
			}
		}
		wts := filepath.Join(common, "worktrees")
		ents, err := os.ReadDir(wts)
		if err != nil {
			if err := p.unlessBenign(err, common); err != nil {
				return err
			}
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			if err := count(); err != nil {
				return err
			}
			w := filepath.Join(wts, e.Name())
			// gitdir names the worktree's .git file, which names this
			// gitdir back: a command that rewrites it could have the next
			// protection leave that .git file out.
			out = append(out, candidate{path: filepath.Join(w, "config.worktree"), make: wt},
				candidate{path: filepath.Join(w, "commondir")}, candidate{path: filepath.Join(w, "gitdir")})
			// The worktree's own .git file, which names this gitdir.
			// git 2.48's relative paths (worktree.useRelativePaths) are
			// relative to w.
			if g, err := ReadGitPath(w, "gitdir"); err == nil {
				if g != "" {
					out = append(out, candidate{path: g})
				}
			} else {
				if err := p.unlessBenign(err, w); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := addGitdir(gitdir, 0); err != nil {
		return nil, err
	}
	if hp := p.resolveHooksPath(base, localHP); hp != "" {
		// Made, empty, where it is missing: else a command could make
		// it, and plant the hooks git runs.
		out = append(out, candidate{path: hp, make: makeDir})
		out = append(out, p.hookLinks(hp, pr)...)
		if filepath.Base(hp) == "_" && filepath.Base(filepath.Dir(hp)) == ".husky" {
			out = append(out, candidate{path: filepath.Dir(hp)})
		}
	}
	return out, nil
}

// maxGitDepth is how deep submodules may nest before the protection
// fails closed.
const maxGitDepth = 8

// hookLinks are the targets of the hooks in dir that are symlinks (a
// hooks directory that links to scripts of the working tree): the hook
// git runs is the target, which is protected where it lies (or, missing,
// said after a command made it); each symlink on the way is watched.
func (p *Protector) hookLinks(dir string, pr *Protection) []candidate {
	ents, err := os.ReadDir(dir)
	if err != nil {
		pr.fail(p.unlessBenign(err, filepath.Dir(dir)))
		return nil
	}
	var out []candidate
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		t, err := p.resolve(filepath.Join(dir, e.Name()), pr)
		if err != nil {
			pr.fail(err)
			continue
		}
		out = append(out, candidate{path: t})
	}
	return out
}

// unlessBenign is nil for err where a protected path is not there
// (ENOENT, ENOTDIR), or where dir, which the kernel did not let this uid
// search, is another user's: a command, running as this uid, can neither
// reach nor chmod it either. Any other error is returned: the protection
// fails closed, since a command can make a path fail (chmod 000 .git) to
// have it left out, then put it back.
func (p *Protector) unlessBenign(err error, dir string) error {
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil
	case errors.Is(err, fs.ErrPermission):
		// Root is refused only where the filesystem refuses root itself
		// (another user's FUSE mount without allow_root, NFS's
		// root_squash): the jail's root, with less, is refused there too.
		if os.Getuid() == 0 || othersUnsearchable(dir) {
			return nil
		}
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("cannot check the protected paths in %s: %w (no command runs until it is searchable again: chmod u+rx it outside wsh)", dir, err)
	}
	return fmt.Errorf("cannot check the protected paths in %s: %w", dir, err)
}

// othersUnsearchable says that dir, or the directory above it that the
// kernel does not let this uid search (HOME=/root for another uid:
// /root/.config/git is refused at /root), is another user's.
func othersUnsearchable(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		err := syscall.Lstat(d, &st)
		switch {
		case err == nil && int(st.Uid) == os.Getuid() && st.Uid == overflowUID() && !initialUserNS():
			// In a user namespace that maps this uid alone (wsh inside
			// wsh's jail, as 65534), the owners it does not map show as
			// the overflow uid, which is this uid too: one of them.
			return true
		case err == nil:
			return int(st.Uid) != os.Getuid()
		case err != syscall.EACCES || d == filepath.Dir(d):
			return false
		}
	}
}

// eachGitdir calls f for each gitdir beneath dir (a modules directory,
// where a submodule at libs/sub has its gitdir at modules/libs/sub): a
// directory with a HEAD. It does not look inside a gitdir; f does.
func (p *Protector) eachGitdir(dir string, budget *int, f func(string) error) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("%s holds more than %d directories to look through for submodules' gitdirs", dir, maxModuleDirs)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return p.unlessBenign(err, filepath.Dir(dir))
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(dir, e.Name())
		isGitdir, err := p.looksLikeGitdir(d)
		if err != nil {
			return err
		}
		if isGitdir {
			if err := f(d); err != nil {
				return err
			}
			continue
		}
		if err := p.eachGitdir(d, budget, f); err != nil {
			return err
		}
	}
	return nil
}

// looksLikeGitdir reports whether d holds any of a gitdir's HEAD, config,
// hooks or objects. Not HEAD alone: a command can move a submodule's HEAD
// away, so that the next command's protection leaves the gitdir out, and
// put it back once it wrote the config; config and hooks are protected
// (mount points, which cannot be moved) once d counted as a gitdir.
func (p *Protector) looksLikeGitdir(d string) (bool, error) {
	for _, n := range []string{"HEAD", "config", "hooks", "objects"} {
		_, err := os.Lstat(filepath.Join(d, n))
		if err == nil {
			return true, nil
		}
		if err := p.unlessBenign(err, d); err != nil {
			return false, err
		}
	}
	return false, nil
}

// isBare says d is a bare repository: a gitdir of its own, as git finds
// one (HEAD a file, objects and refs directories), with no .git.
//
// As git looks: objects and refs through a symlink, a HEAD that is a
// symlink (to refs/...); what git would not take is taken all the same
// (a HEAD of any content): protecting too much costs a placeholder, too
// little a hook on the host.
func isBare(d string) bool {
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		return false
	}
	for _, n := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(d, n))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// maxGitFile is the most of a .git file, a commondir or a gitdir file
// wsh reads, as git does (1 MiB).
const maxGitFile = 1 << 20

// maxModuleDirs is how many directories beneath a repository's modules
// wsh looks through (a submodule at a/b/c has its gitdir at
// modules/a/b/c) before the protection fails closed.
const maxModuleDirs = 4096

// ReadGitFile reads a .git file: "gitdir: DIR", relative to its directory.
func ReadGitFile(path string) (string, bool) {
	b, err := ReadRegular(path, maxGitFile)
	if err != nil {
		return "", false
	}
	// As git reads it: "gitdir: " exactly, the rest up to the line's end.
	dir, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(dir, "\r\n"); i >= 0 {
		dir = dir[:i]
	}
	if dir == "" {
		return "", false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(path), dir)
	}
	return filepath.Clean(dir), true
}

// ReadCommondir reads gitdir's commondir, as git does, when it names a
// directory other than gitdir.
func ReadCommondir(gitdir string) (string, bool) {
	c, err := ReadGitPath(gitdir, "commondir")
	if err != nil || c == "" {
		return "", false
	}
	return c, c != gitdir
}

// ReadGitPath reads the path that the file name of dir holds (a
// commondir, a worktree's gitdir), as git reads it: up to the line's end,
// relative to dir, cleaned; "" for an empty file.
func ReadGitPath(dir, name string) (string, error) {
	b, err := ReadRegular(filepath.Join(dir, name), maxGitFile)
	if err != nil {
		return "", err
	}
	p := strings.TrimRight(string(b), "\r\n")
	if p == "" {
		return "", nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// resolveHooksPath is the directory that hp, core.hooksPath as the
// system's, the user's and the repository's own config set it (the last
// one set wins, as in git), names for the repository at base, or "". git
// runs a relative one from the working tree's root. include directives
// are not followed.
func (p *Protector) resolveHooksPath(base, hp string) string {
	switch {
	case hp == "":
		return ""
	case hp == "~" || strings.HasPrefix(hp, "~/"):
		if p.home == "" {
			return ""
		}
		hp = filepath.Join(p.home, hp[1:])
	case !filepath.IsAbs(hp):
		hp = filepath.Join(base, hp)
	}
	return filepath.Clean(hp)
}

// globalHooksPath is core.hooksPath as the system's and the user's config
// set it, or "".
func (p *Protector) globalHooksPath() (string, error) {
	hp := ""
	for _, f := range p.gitCfg {
		m, err := readGitConfig(f)
		if err != nil {
			return "", p.unlessBenign(err, filepath.Dir(f))
		}
		if v, ok := m["core.hookspath"]; ok {
			hp = v
		}
	}
	return hp, nil
}

// globalGitConfigs are the config files git, run on the host with
// environ, reads before a repository's: the system's (/etc/gitconfig, or
// $GIT_CONFIG_SYSTEM; none with GIT_CONFIG_NOSYSTEM) and the user's
// ($GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config and ~/.gitconfig).
// Both the defaults and the variables are protected (and read for
// core.hooksPath): a user may run git on the host without the variable
// wsh was started with. A relative value is git's to resolve against the
// directory it runs in: it is protected where it lies in a writable path
// by the name WSH_PROTECT would match, not here.
func globalGitConfigs(environ []string) []string {
	out := []string{"/etc/gitconfig"}
	if sys := envValue(environ, "GIT_CONFIG_SYSTEM"); filepath.IsAbs(sys) {
		out = append(out, filepath.Clean(sys))
	}
	home := envValue(environ, "HOME")
	xdg := envValue(environ, "XDG_CONFIG_HOME")
	if !filepath.IsAbs(xdg) && filepath.IsAbs(home) {
		xdg = filepath.Join(home, ".config")
	}
	if filepath.IsAbs(xdg) {
		out = append(out, filepath.Join(xdg, "git", "config"))
	}
	if filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	if g := envValue(environ, "GIT_CONFIG_GLOBAL"); filepath.IsAbs(g) {
		out = append(out, filepath.Clean(g))
	}
	return out
}

// envValue is key's value in environ, the last one set, or "".
func envValue(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// Protection finds what the jail must pin and make read-only now, and
// makes the missing protected paths that wsh makes (placeholder). A
// component that is a symlink ends the walk: its target, beneath a
// writable path, is protected where it lies (a symlink cannot be a mount
// point).
//
// With mounts (the full rung) it makes the missing ones that wsh makes,
// and holds every protected directory and empty file it finds (see
// placeholders); without (the lower rungs, where a placeholder protects
// nothing) it makes none, and a missing path is said after a command
// made it, as any other.
func (p *Protector) Protection(dir string, mounts bool) (Protection, error) {
	out := Protection{mounts: mounts}
	cs, err := p.candidates(dir, &out)
	if err != nil {
		return out, err
	}
	for _, c := range cs {
		p.walk(c.path, c.base, c.make, &out)
	}
	return out, out.err
}

// walk walks from base to path, pinning the directories in between,
// making path if it is missing and make says how, and protecting it if it
// is there. A base that is a repository below a writable path is pinned
// too, with the directories between them: else a command could move the
// repository away and put one of its own, with its own .git, in its place.
// A symlink on the way cannot be a mount point: its target, when it lies
// in a writable path, is protected there, and the symlink itself is
// watched (a command can point it elsewhere: wsh says so after).
func (p *Protector) walk(path, root string, make placeholder, out *Protection) {
	if out.hides(path) {
		return // where a symlink led: covered in every jail
	}
	if _, err := out.lstatOnce(filepath.Join(root, ".git")); err != nil {
		out.fail(p.unlessBenign(err, root))
	} else if w := p.outermostRoot(root); w != "" {
		// Up to the outermost writable path that holds the repository
		// (the start directory in /tmp: up to /tmp), not the nearest,
		// which may be the repository itself: else a command could move
		// a directory above it away and put a copy in its place.
		for d := filepath.Dir(root); paths.Under(d, w) && d != w; d = filepath.Dir(d) {
			out.add(d, true)
		}
		if root != w {
			out.add(root, true)
		}
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(path, root), "/")
	if rel == "" || rel == path {
		return
	}
	parts := strings.Split(rel, "/")
	cur := root
	for i, c := range parts {
		next := filepath.Join(cur, c)
		last := i == len(parts)-1
		fi, err := out.lstatOnce(next)
		if last && out.mounts {
			fi, err = p.settle(next, make, fi, err)
			out.lstat[next] = lstatResult{fi, err}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			out.noteMissing(path)
			return
		case err != nil:
			out.fail(p.unlessBenign(err, cur))
			return
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := p.resolve(next, out)
			if err != nil {
				out.fail(err)
				return
			}
			if r := p.rootOf(t); r != "" && t != path {
				p.walk(filepath.Join(append([]string{t}, parts[i+1:]...)...), r, makeNone, out)
			}
			return
		case last:
			out.add(next, false)
		case fi.IsDir():
			out.add(next, true)
			cur = next
		default:
			return
		}
	}
}

// chmodPlaceholder gives the placeholder fd its mode (placeholderMode)
// whatever the umask: another user's run in the same project must be able
// to open it, to hold its shared lock (placeholders.hold), or the run
// that made it would remove it under that run's read-only mount. (.ssh,
// 0700, is only ever in a home, which no other user's run shares.)
func chmodPlaceholder(fd int, mode uint32) error {
	return unix.Fchmod(fd, mode)
}

// makePlaceholder makes path as make says, in its directory opened
// without following any symlink: a command that swaps a directory on the
// way for a symlink cannot have wsh make the placeholder elsewhere. It
// makes none where a command could not make path itself
// (unprivilegedWritable): there it protects nothing.
func makePlaceholder(path string, make placeholder) (*os.File, error) {
	if make == makeNone {
		return nil, fs.ErrNotExist
	}
	dfd, err := resolve.Open(unix.AT_FDCWD, filepath.Dir(path), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil {
		return nil, err
	}
	if !unprivilegedWritable(&st) {
		return nil, unix.EACCES
	}
	name := filepath.Base(path)
	var rnd [6]byte
	if _, err := unix.Getrandom(rnd[:], 0); err != nil {
		return nil, os.NewSyscallError("getrandom", err)
	}
	tmp := "." + name + ".wsh-" + hex.EncodeToString(rnd[:])
	f, err := makeLocked(dfd, tmp, name, make)
	if err != nil {
		return nil, err
	}
	// Put in place only now, locked: a run sweeping a ledger that names
	// an older placeholder whose inode number this one got (a file
	// system gives a removed inode's number out again) cannot take it
	// for that one and remove it before this run holds it.
	if err := unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE); err != nil {
		f.Close()
		removeTmp(dfd, tmp, make)
		return nil, err
	}
	return f, nil
}

// makeLocked makes the placeholder tmp in dfd as make says (name is the
// name it is for: its mode), and returns it open and locked shared.
func makeLocked(dfd int, tmp, name string, make placeholder) (*os.File, error) {
	var fd int
	var err error
	if make == makeDir {
		if err := unix.Mkdirat(dfd, tmp, 0o755); err != nil {
			return nil, err
		}
		fd, err = unix.Openat(dfd, tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	} else {
		fd, err = unix.Openat(dfd, tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = chmodPlaceholder(fd, placeholderMode(name, make == makeDir))
	if err == nil && make == makeCommondir {
		// "./", not ".": libgit2 (1.5 to 1.9) finds no repository with
		// ".", and git reads both as the gitdir itself.
		_, err = f.WriteString(commondirSelf)
	}
	if err == nil {
		err = unix.Flock(fd, unix.LOCK_SH)
	}
	if err != nil {
		f.Close()
		removeTmp(dfd, tmp, make)
		return nil, err
	}
	return f, nil
}

// removeTmp removes a placeholder made under its temporary name tmp
// that is not to be put in place.
func removeTmp(dfd int, tmp string, make placeholder) {
	flag := 0
	if make == makeDir {
		flag = unix.AT_REMOVEDIR
	}
	unix.Unlinkat(dfd, tmp, flag)
}

// commondirSelf is the commondir wsh makes: the gitdir itself.
const commondirSelf = "./\n"

// DefaultProtected returns the names protected in every writable path by
// default (docs/config.md says why each is there); WSH_PROTECT adds to
// them. A copy: no caller can take one away.
func DefaultProtected() []string { return append([]string(nil), defaultProtected...) }

// initialUserNS says that this process is in the initial user
// namespace, whose uid map is the whole range.
func initialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
}

// overflowUID is the uid the kernel shows for an owner the user namespace
// does not map (/proc/sys/kernel/overflowuid; 65534 by default).
func overflowUID() uint32 {
	b, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil {
		return 65534
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 65534
	}
	return uint32(n)
}
