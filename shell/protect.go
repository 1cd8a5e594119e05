package shell

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"wsh/jail"
)

// DefaultProtected are the paths, relative to each writable path, that the
// jail keeps read-only, and that a command cannot make where they are
// missing: what is written there runs on the host later, unsandboxed
// (docs/config.md says why each is here).
var DefaultProtected = []string{
	".git/hooks", ".git/config", ".gitmodules",
	".gitconfig", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
	".mcp.json", ".vscode", ".idea", ".claude/commands", ".claude/agents", ".codex", ".agents",
}

// noPlaceholder are protected paths that wsh does not make where they are
// missing: an empty directory in their place would change what the host's
// programs do (git fails on a directory ~/.gitconfig; bash reads a
// directory ~/.bash_profile instead of ~/.profile, and fails).
var noPlaceholder = map[string]bool{
	".gitconfig": true, ".bashrc": true, ".bash_profile": true, ".zshrc": true, ".zprofile": true, ".profile": true,
}

// A protection is what the jail does for the protected paths at one
// moment: the directories to pin, the paths to make read-only.
type protection struct {
	pins, paths []jail.PathID
}

// protector knows the protected paths of a Jailer.
type protector struct {
	roots    []string // the writable paths, where the protected paths lie
	projects []string // those where wsh makes the missing ones (not /tmp, $TMPDIR)
	names    []string // relative to each root
	absolute []string // WSH_PROTECT's absolute paths

	mu    sync.Mutex
	repos map[string]repoCache // a project root's repositories one level down
}

// repoCache is the list of a directory's children that are repositories
// (have a .git), as of the directory's mtime.
type repoCache struct {
	mtime time.Time
	repos []string
}

// reposBelow lists the children of dir that are git repositories: a
// directory of projects (wsh started in ~/src) has their .git one level
// down. Cached until dir's mtime changes (a child made or removed).
func (p *protector) reposBelow(dir string) []string {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.repos[dir]; ok && c.mtime.Equal(fi.ModTime()) {
		return c.repos
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var repos []string
	for _, e := range ents {
		if !e.IsDir() || len(repos) >= 256 {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, e.Name(), ".git")); err == nil {
			repos = append(repos, filepath.Join(dir, e.Name()))
		}
	}
	if p.repos == nil {
		p.repos = map[string]repoCache{}
	}
	p.repos[dir] = repoCache{fi.ModTime(), repos}
	return repos
}

// newProtector makes the protector for the writable paths. projects are
// the start directory and WSH_WRITABLE; extra is WSH_PROTECT.
func newProtector(roots, projects, extra []string) *protector {
	p := &protector{roots: roots, projects: projects, names: append([]string(nil), DefaultProtected...)}
	for _, e := range extra {
		if filepath.IsAbs(e) {
			p.absolute = append(p.absolute, filepath.Clean(e))
		} else {
			p.names = append(p.names, filepath.Clean(e))
		}
	}
	return p
}

// bases are the directories the protected names are matched in: every
// writable path, the project roots (the start directory), the
// repositories one level below a project root, and the working directory
// dir and each directory above it up to the writable path it lies in (a
// repository wsh was not started in, but a command works in).
func (p *protector) bases(dir string) []string {
	out := append(append([]string(nil), p.roots...), p.projects...)
	for _, pr := range p.projects {
		for _, r := range p.reposBelow(pr) {
			if !contains(out, r) {
				out = append(out, r)
			}
		}
	}
	if dir == "" {
		return out
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	root := p.rootOf(dir)
	for d := dir; root != "" && under(d, root); d = filepath.Dir(d) {
		if !contains(out, d) {
			out = append(out, d)
		}
		if d == root {
			break
		}
	}
	return out
}

// candidates are the protected paths beneath the writable paths, for a
// command working in dir, existing or not, by the paths written (not
// resolved), each with the base it is matched in.
func (p *protector) candidates(dir string) (paths, bases []string) {
	add := func(path, base string) {
		if !contains(paths, path) {
			paths, bases = append(paths, path), append(bases, base)
		}
	}
	for _, b := range p.bases(dir) {
		if p.rootOf(b) == "" {
			continue
		}
		for _, n := range p.names {
			add(filepath.Join(b, n), b)
		}
		for _, g := range gitdirPaths(b) {
			if root := p.rootOf(g); root != "" {
				add(g, root)
			}
		}
	}
	for _, a := range p.absolute {
		if root := p.rootOf(a); root != "" {
			add(a, root)
		}
	}
	return paths, bases
}

func (p *protector) rootOf(path string) string {
	best := ""
	for _, r := range p.roots {
		if under(path, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// gitdirPaths are, when root/.git is a file ("gitdir: DIR", a worktree or
// a submodule), the .git file itself and the hooks and config of the
// gitdir it names and of its common directory: git runs those.
func gitdirPaths(root string) []string {
	gitFile := filepath.Join(root, ".git")
	fi, err := os.Lstat(gitFile)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(gitFile)
	if err != nil || len(b) > 4096 {
		return nil
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	out := []string{gitFile, filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree"), filepath.Join(dir, "hooks")}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil && len(c) < 4096 {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		out = append(out, filepath.Join(common, "config"), filepath.Join(common, "hooks"))
	}
	return out
}

// paths are the protected paths, cleaned, for the shell's own check of a
// path beneath dir.
func (p *protector) paths(dir string) []string {
	ps, _ := p.candidates(dir)
	return ps
}

// protection finds what the jail must pin and make read-only now, and
// makes, in the project roots, the missing protected paths that have no
// reason not to be made (an empty directory: git shows none). A component
// that is a symlink ends the walk: its target, beneath a writable path, is
// protected where it lies (a symlink cannot be a mount point).
func (p *protector) protection(dir string) protection {
	var out protection
	paths, bases := p.candidates(dir)
	for i, path := range paths {
		p.walk(path, bases[i], &out)
	}
	return out
}

// walk walks from base to path, pinning the directories in between,
// making a missing one where allowed, and protecting path if it is there.
// A base that is a repository below a writable path is pinned too, with
// the directories between them: else a command could move the repository
// away and put one of its own, with its own .git, in its place.
func (p *protector) walk(path, root string, out *protection) {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		// not a repository: nothing above it to pin
	} else if w := p.rootOf(root); w != "" {
		for d := filepath.Dir(root); under(d, w) && d != w; d = filepath.Dir(d) {
			if id, err := jail.NewPathID(d); err == nil && !containsID(out.pins, id) {
				out.pins = append(out.pins, id)
			}
		}
		if root != w {
			if id, err := jail.NewPathID(root); err == nil && !containsID(out.pins, id) {
				out.pins = append(out.pins, id)
			}
		}
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(path, root), "/")
	if rel == "" {
		return
	}
	parts := strings.Split(rel, "/")
	cur := root
	for i, c := range parts {
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			if !p.makeable(root, rel, c) || os.Mkdir(next, 0o755) != nil {
				return
			}
			fi, err = os.Lstat(next)
		}
		switch {
		case err != nil:
			return
		case fi.Mode()&fs.ModeSymlink != 0:
			if t, err := filepath.EvalSymlinks(next); err == nil {
				if r := p.rootOf(t); r != "" && t != path {
					p.walk(filepath.Join(append([]string{t}, parts[i+1:]...)...), r, out)
				}
			}
			return
		case i == len(parts)-1:
			if id, err := jail.NewPathID(next); err == nil && !containsID(out.paths, id) {
				out.paths = append(out.paths, id)
			}
		case fi.IsDir():
			if id, err := jail.NewPathID(next); err == nil && !containsID(out.pins, id) {
				out.pins = append(out.pins, id)
			}
			cur = next
		default:
			return
		}
	}
}

// makeable says whether wsh makes the missing component c of rel in root:
// only in a project root, never .git itself (git init must work: a
// repository a command makes is protected from the next command on), and
// never the files that a directory in their place would break.
func (p *protector) makeable(root, rel, c string) bool {
	return contains(p.projects, root) && c != ".git" && !noPlaceholder[rel]
}

func containsID(ids []jail.PathID, id jail.PathID) bool {
	for _, x := range ids {
		if x.Path == id.Path {
			return true
		}
	}
	return false
}

// protected reports whether real, a resolved path, is or lies beneath a
// protected path.
func (p *protector) protected(real string) bool {
	if p == nil {
		return false
	}
	for _, q := range p.paths(filepath.Dir(real)) {
		if under(real, q) {
			return true
		}
		// Where a protected path is a symlink, its target is protected.
		if t, err := filepath.EvalSymlinks(q); err == nil && t != q && under(real, t) {
			return true
		}
	}
	return false
}
