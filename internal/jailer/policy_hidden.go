//go:build linux && cgo

package jailer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// hiddenName reports whether path, as written or as resolved, names a
// hidden path or something beneath one. It fails closed: a path that cannot
// be resolved (too long, a symlink loop) counts as hidden.
func (p *policy) hiddenName(path string) bool {
	if len(p.hidden) == 0 {
		return false
	}
	if p.nameHidden(filepath.Clean(path)) {
		return true
	}
	real, _, err := p.realPath(path)
	switch {
	case err == nil:
		return p.nameHidden(real)
	case errors.Is(err, fs.ErrNotExist):
		return false
	}
	return true
}

// nameHidden reports whether real, a resolved path, is or lies beneath a
// hidden path, as written or as it resolves now: a hidden path whose
// parent a command made a symlink (~/.tool to ~/realtool) hides where it
// leads, as the jail covers it there.
func (p *policy) nameHidden(real string) bool {
	for _, h := range p.hidden {
		if under(real, h.Path) {
			return true
		}
	}
	for _, l := range p.learned.list() {
		if under(real, l) {
			return true
		}
	}
	for _, h := range p.hidden {
		if r, _, err := p.realPath(h.Path); err == nil && r != h.Path && under(real, r) {
			return true
		}
	}
	return false
}

func (p *policy) idHidden(st *unix.Stat_t) bool {
	for _, h := range p.hidden {
		if (h.Dev != 0 || h.Ino != 0) && h.Same(st) {
			return true
		}
	}
	return false
}

// isHiddenRoot reports whether fi is a hidden path itself.
func (p *policy) isHiddenRoot(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	u := unix.Stat_t{Dev: st.Dev, Ino: st.Ino}
	return p.idHidden(&u)
}

// fdHidden reports whether the file fd refers to is hidden or lies beneath
// a hidden directory, wherever a command may have moved it: it checks the
// identity of the file and of each directory above it, found from the
// descriptor (".."), not from a path. It fails closed.
func (p *policy) fdHidden(fd int) bool {
	if len(p.hidden) == 0 {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return true
	}
	if p.idHidden(&st) {
		return true
	}
	kind := st.Mode & unix.S_IFMT
	if p.home.owns(st.Dev) {
		// Opened through the copy-on-write home: recognised by its path
		// in the home. (Its directories cannot be renamed there, with
		// overlayfs's redirect_dir off; what the host has hidden
		// beneath them is covered in every jail of this session.)
		real, ok := p.home.pathOf(fd)
		return !ok || p.nameHidden(real)
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !filepath.IsAbs(real) || strings.HasSuffix(real, " (deleted)") {
		// A pipe or socket has no path; a file whose path cannot be
		// told is refused.
		return kind == unix.S_IFREG || kind == unix.S_IFDIR || kind == unix.S_IFLNK
	}
	if p.nameHidden(real) {
		return true
	}
	dir, err := parentDir(fd, &st, real)
	if err != nil {
		return true
	}
	return p.walkUpHidden(dir)
}

// parentDir opens the directory fd's file is in (fd itself for a
// directory), checking that the file is really in it.
func parentDir(fd int, st *unix.Stat_t, real string) (int, error) {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.Openat(fd, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	dir, err := unix.Open(filepath.Dir(real), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var in unix.Stat_t
	if err := unix.Fstatat(dir, filepath.Base(real), &in, unix.AT_SYMLINK_NOFOLLOW); err != nil || in.Dev != st.Dev || in.Ino != st.Ino {
		unix.Close(dir)
		return -1, unix.ESTALE // moved meanwhile
	}
	return dir, nil
}

// walkUpHidden checks dir and every directory above it, up to the root,
// and closes dir.
func (p *policy) walkUpHidden(dir int) bool {
	defer func() { unix.Close(dir) }()
	for i := 0; i < 4096; i++ {
		var st, ust unix.Stat_t
		if unix.Fstat(dir, &st) != nil || p.idHidden(&st) {
			return true
		}
		up, err := unix.Openat(dir, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return true
		}
		unix.Close(dir)
		dir = up
		if unix.Fstat(up, &ust) != nil {
			return true
		}
		if ust.Dev == st.Dev && ust.Ino == st.Ino {
			return false // the root is its own parent
		}
	}
	return true
}

// learnedHidden is where hidden paths led, through a symlink, at any time
// since wsh started (a hidden path the host made a symlink to a directory
// elsewhere while wsh ran): it stays hidden for the rest of the run, so a
// command that removes or re-points the symlink (in the copy-on-write
// home, or in a writable path) does not uncover what it led to.
type learnedHidden struct {
	mu    sync.Mutex
	paths []string
}

func (l *learnedHidden) list() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paths
}

func (l *learnedHidden) add(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.paths, path) {
		l.paths = append(l.paths[:len(l.paths):len(l.paths)], path)
	}
}

// hiddenNow is what the next jail is to cover: the hidden paths, and every
// place one led to, learned now or before. A place that is the root, a
// writable path or the home, or holds one, is not learned: covering it
// would end the run's work (a command can point a hidden path that lies in
// a writable path anywhere), and while the symlink leads there the jail
// covers it anyway.
//
// Where a hidden path leads is asked of the jail's view and of the host's:
// a copy-on-write home in use goes on showing what it showed (overlayfs
// does not follow changes beneath it), so a symlink the host made there
// since may be missing from the view, and what it leads to must be
// covered all the same.
func (p *policy) hiddenNow() []proto.PathID {
	if len(p.hidden) == 0 {
		return nil
	}
	for _, h := range p.hidden {
		if r, _, err := p.realPath(h.Path); err == nil && r != h.Path && p.mayLearn(r) {
			p.learned.add(r)
		}
		if r, err := filepath.EvalSymlinks(h.Path); err == nil && r != h.Path && p.mayLearn(r) {
			p.learned.add(r)
		}
	}
	learned := p.learned.list()
	if len(learned) == 0 {
		return p.hidden
	}
	ids := append([]proto.PathID(nil), p.hidden...)
	for _, l := range learned {
		ids = append(ids, proto.PathID{Path: l})
	}
	return ids
}

// hiddenPaths are the paths of hiddenNow: what the protector keeps out
// of (protect_hidden.go).
func (p *policy) hiddenPaths() []string {
	var out []string
	for _, id := range p.hiddenNow() {
		out = append(out, id.Path)
	}
	return out
}

func (p *policy) mayLearn(r string) bool {
	if r == "/" || !filepath.IsAbs(r) {
		return false
	}
	for _, w := range p.writable {
		if under(w.Path, r) {
			return false
		}
	}
	return p.home == nil || !under(p.home.path, r)
}
