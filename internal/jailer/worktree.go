//go:build linux && cgo

package jailer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/interp"
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
// only where C was writable already.
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
	x, ok := readGitFile(gitFile)
	if !ok {
		return ""
	}
	x, err := filepath.EvalSymlinks(x)
	if err != nil {
		return ""
	}
	c, ok := readCommondir(x)
	if !ok {
		return ""
	}
	if c, err = filepath.EvalSymlinks(c); err != nil || filepath.Dir(x) != filepath.Join(c, "worktrees") {
		return ""
	}
	b, err := readRegular(filepath.Join(x, "gitdir"), maxGitFile)
	if err != nil {
		return ""
	}
	back := strings.TrimRight(string(b), "\r\n")
	if !filepath.IsAbs(back) {
		back = filepath.Join(x, back)
	}
	if back, err = filepath.EvalSymlinks(back); err != nil || back != gitFile {
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
			x, ok := readGitFile(p)
			if !ok {
				return ""
			}
			if c, ok := readCommondir(x); ok {
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

// worktreeNames are the linked worktrees of the repository whose working
// tree holds dir, as a command starts there (nil: none, or no
// repository): what checkWorktrees compares with once it ended.
type worktreeNames struct {
	common string
	names  map[string]bool
}

func takeWorktrees(dir string) *worktreeNames {
	c := gitCommon(dir)
	if c == "" {
		return nil
	}
	w := &worktreeNames{common: c, names: map[string]bool{}}
	ents, _ := os.ReadDir(filepath.Join(c, "worktrees"))
	for _, e := range ents {
		w.names[e.Name()] = true
	}
	return w
}

// checkWorktrees says which worktrees a command added whose working tree
// is not on the host (git worktree add ../x, from a project under the
// home: x lies outside the writable paths, where the jail's writes stay
// in its copy-on-write home, and the host's git sees it prunable). Such
// a command fails: its status 0 becomes 1, so that a script does not go
// on in a worktree only its jail had.
func (j *Jailer) checkWorktrees(before *worktreeNames, err error) error {
	if before == nil {
		return err
	}
	wts := filepath.Join(before.common, "worktrees")
	ents, _ := os.ReadDir(wts)
	for _, e := range ents {
		if before.names[e.Name()] {
			continue
		}
		b, rerr := readRegular(filepath.Join(wts, e.Name(), "gitdir"), maxGitFile)
		if rerr != nil {
			continue
		}
		g := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(g) {
			g = filepath.Join(wts, e.Name(), g)
		}
		tree := filepath.Dir(filepath.Clean(g))
		if _, serr := os.Lstat(g); !errors.Is(serr, fs.ErrNotExist) {
			continue
		}
		fmt.Fprintf(j.warn, "wsh: the worktree %s that a command added is not on the host: it lies outside the writable paths (%s), where the jail's writes do not reach the host, and the host's git sees it prunable (git worktree prune removes it); add it in a writable path, or name its directory in WSH_WRITABLE\n",
			tree, strings.Join(j.writable, ", "))
		if err == nil {
			err = interp.ExitStatus(1)
		}
	}
	return err
}
