//go:build linux && cgo

package worktree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/interp"

	"wsh/config"
	"wsh/internal/paths"
	"wsh/internal/protect"
)

// linkedCommon is the common git directory of the linked worktree that
// holds dir (resolved), or "": git's links between the two agree both
// ways. The worktree's .git file names a gitdir C/worktrees/NAME, whose
// commondir names C and whose gitdir file names that .git file back, and
// C is a gitdir (HEAD, objects, refs). A commit in the worktree writes
// its index and HEAD there and its objects and refs in C: without C, it
// would land in the jail's copy-on-write home, or fail.
//
// The back link keeps a .git file a command wrote (gitdir: ~/.ssh) from
// making a directory writable: it lies in C, which a jail could write
// only where C was writable already, and it must name dir's .git file as
// it is spelled, with no symlink on the way (dir is resolved).
func linkedCommon(dir string) string {
	gitFile := ""
	for top := dir; ; {
		p := filepath.Join(top, ".git")
		fi, err := os.Lstat(p)
		if err == nil {
			if !fi.Mode().IsRegular() {
				return "" // the main worktree's .git, or none of git's
			}
			gitFile = p
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		parent := filepath.Dir(top)
		if parent == top {
			return ""
		}
		top = parent
	}
	x, ok := protect.ReadGitFile(gitFile)
	if !ok {
		return ""
	}
	x, err := filepath.EvalSymlinks(x)
	if err != nil {
		return ""
	}
	c, ok := protect.ReadCommondir(x)
	if !ok {
		return ""
	}
	if c, err = filepath.EvalSymlinks(c); err != nil || filepath.Dir(x) != filepath.Join(c, "worktrees") {
		return ""
	}
	// As git wrote it (a real path): resolved, a symlink on its way
	// that a command made (/tmp/wt -> its own project) would name the
	// command's .git file.
	if back, err := protect.ReadGitPath(x, "gitdir"); err != nil || back != gitFile {
		return ""
	}
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(c, n)); err != nil {
			return ""
		}
	}
	return c
}

// gitCommon is the common git directory of the repository whose working
// tree holds dir, as git finds it from there: the .git directory, or
// what a .git file's gitdir names as its commondir; "" for none.
func gitCommon(dir string) string {
	for top := dir; ; {
		p := filepath.Join(top, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return p
		case err == nil && fi.Mode().IsRegular():
			x, ok := protect.ReadGitFile(p)
			if !ok {
				return ""
			}
			if c, ok := protect.ReadCommondir(x); ok {
				return c
			}
			return x
		case err == nil || !errors.Is(err, fs.ErrNotExist):
			return ""
		}
		parent := filepath.Dir(top)
		if parent == top {
			return ""
		}
		top = parent
	}
}

// A Checker takes the linked worktrees a command can reach as it starts
// (Take) and says, once it ended, those it added off the host (Check).
type Checker struct {
	// Writable are the Jailer's writable paths.
	Writable []string
	// Sample is the count of commands started and of those running now.
	Sample func() (starts uint64, running int)
	// Warn is where what is found is said.
	Warn io.Writer
	// Once reports whether key is said for the first time (and notes it).
	Once func(key string) bool
}

// Names are the linked worktrees of the repositories a command can reach,
// as it starts: those whose working tree holds its directory or a
// writable path. Check compares them with what is there once it ended.
type Names struct {
	names  map[string]map[string]bool // by common directory
	starts uint64                     // the commands started, as it started
	alone  bool                       // no other command of the Runner ran then
}

// Take notes the linked worktrees a command working in dir can reach.
func (k *Checker) Take(dir string) *Names {
	w := &Names{names: map[string]map[string]bool{}}
	for _, d := range append([]string{dir}, k.Writable...) {
		c := gitCommon(d)
		if c == "" || w.names[c] != nil {
			continue
		}
		set := map[string]bool{}
		ents, _ := os.ReadDir(filepath.Join(c, "worktrees"))
		for _, e := range ents {
			set[e.Name()] = true
		}
		w.names[c] = set
	}
	var n int
	w.starts, n = k.Sample()
	w.alone = n == 1
	return w
}

// Check says which worktrees were added, while a command ran,
// whose working tree is not on the host (git worktree add ../x, from a
// project under the home: x lies outside the writable paths, where the
// jail's writes stay in its copy-on-write home, and the host's git sees
// it prunable), once each. A command that ran alone, and so made it, fails:
// its status 0 becomes 1, so that a script does not go on in a worktree
// only its jail had. Where other commands ran beside it (a background
// job), which one made it is not known: it is said, no status changed.
func (k *Checker) Check(before *Names, err error) error {
	starts, n := k.Sample()
	alone := before.alone && starts == before.starts && n == 1
	for c, names := range before.names {
		wts := filepath.Join(c, "worktrees")
		ents, _ := os.ReadDir(wts)
		for _, e := range ents {
			if names[e.Name()] {
				continue
			}
			tree, ok := offHost(filepath.Join(wts, e.Name()))
			if !ok {
				continue
			}
			if k.Once("worktree:" + filepath.Join(wts, e.Name())) {
				fmt.Fprintf(k.Warn, "wsh: the worktree %s that a command added is not on the host: it lies outside the writable paths (%s), where the jail's writes do not reach the host, and the host's git sees it prunable (git worktree prune removes it); add it in a writable path, or name its directory in WSH_WRITABLE\n",
					paths.Shown(tree), strings.Join(k.Writable, ", "))
			}
			if alone && err == nil {
				err = interp.ExitStatus(1)
			}
		}
	}
	return err
}

// offHost says where the worktree whose gitdir is w has its working tree
// (the directory of the .git file its gitdir file names), when that .git
// file is not on the host.
func offHost(w string) (string, bool) {
	g, err := protect.ReadGitPath(w, "gitdir")
	if err != nil || g == "" {
		return "", false
	}
	if _, err := os.Lstat(g); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	return filepath.Dir(g), true
}

// AddLinkedCommon adds to the writable paths w the common git directory of
// the linked worktree the start directory d (resolved) lies in
// (linkedCommon), where it is not writable already: a commit there
// writes in it. Only where d would be made writable (not a system
// directory, not the home itself), and not a directory the host runs
// programs from (a repository in ~/bin): there the commits stay in the
// jail, and why is said.
func AddLinkedCommon(d string, w []string, environ []string) (out []string, note string) {
	c := linkedCommon(d)
	if c == "" {
		return w, ""
	}
	for _, p := range w {
		if paths.Under(c, p) {
			return w, ""
		}
	}
	g := paths.NewGround(environ, nil)
	why := paths.NotWritableByDefault(c, g.Home())
	if why == "" {
		if _, err := g.CheckReal("the common git directory of the worktree", c, false); err != nil {
			why = err.Error()
		} else if r, err := config.CheckWritable(c); err != nil || r != c {
			why = "it changed as wsh started"
		}
	}
	if why != "" {
		return w, "wsh: the worktree's git directory " + paths.Shown(c) + " is not writable in the jail (" + why +
			"): a commit in it stays in the jail"
	}
	return append(w, c), ""
}

// RepoAboveNote is what to say when the start directory d (resolved) lies
// below the top of a git repository that no writable path holds, or "":
// in the full rung's jail, git's search for it stops at the start
// directory's bind (a file system boundary), and on every rung what git
// would write there would not reach the host. wsh does not make the repository writable for it: the
// user chose the start directory.
func RepoAboveNote(d string, w []string) string {
	if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
		return "" // the top of a repository (a nested clone's, a submodule's)
	}
	for cur := d; ; {
		top := filepath.Dir(cur)
		if top == cur {
			return ""
		}
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			for _, p := range w {
				if paths.Under(top, p) {
					return ""
				}
			}
			return "wsh: the start directory " + paths.Shown(d) + " lies in the git repository " + paths.Shown(top) +
				", which is not writable in the jail: git cannot work there as it does outside; start wsh in " + paths.Shown(top) +
				", or name it in WSH_WRITABLE"
		}
		cur = top
	}
}
