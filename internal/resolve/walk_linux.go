package resolve

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// maxHops is the kernel's MAXSYMLINKS: how many symlinks one resolution
// may pass through before ELOOP.
const maxHops = 40

// known are the resolve flags the walk keeps. Another (RESOLVE_IN_ROOT,
// RESOLVE_NO_XDEV, RESOLVE_CACHED) gets ENOSYS: the walk does not keep
// it, and an open must never be looser than its caller asked.
const known = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_BENEATH

// errLink says the last component is a symlink the caller's flags follow.
var errLink = errors.New("resolve: the last component is a symlink")

// A walker resolves one path by hand. Every component but the last is
// opened with openat(O_PATH|O_NOFOLLOW) from the directory reached so
// far, so the kernel follows no symlink: a component that is one is
// refused (ELOOP) under RESOLVE_NO_SYMLINKS and otherwise followed here,
// by its text, unless it lives on procfs, the only home of magic links
// (/proc/PID/{cwd,root,exe,fd/N,ns/*}), whose text is not what they lead
// to. So the walk is stricter than openat2 in two places: under
// RESOLVE_BENEATH any "..", even one that stays beneath, is EXDEV, and
// when following, every symlink on procfs is ELOOP (/proc/self too).
type walker struct {
	how     *unix.OpenHow
	cur     int      // the directory reached
	owned   bool     // cur is the walker's to close
	todo    []string // the components left
	mustDir bool     // the path ends in "/"
	hops    int
}

// walk opens path relative to dirfd with how's flags and restrictions,
// without openat2.
func walk(dirfd int, path string, how *unix.OpenHow) (int, error) {
	switch {
	case how.Resolve&^known != 0:
		return -1, unix.ENOSYS
	case how.Resolve == 0:
		return openat(dirfd, path, int(how.Flags), uint32(how.Mode))
	case path == "":
		return -1, unix.ENOENT
	}
	w := &walker{how: how, cur: dirfd}
	defer w.release()
	w.todo, w.mustDir = split(path)
	if path[0] == '/' {
		if err := w.root(); err != nil {
			return -1, err
		}
	} else if dirfd == unix.AT_FDCWD {
		// A descriptor of its own: follow asks fstatfs of it.
		fd, err := openat(unix.AT_FDCWD, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		w.move(fd)
	}
	return w.run()
}

func (w *walker) run() (int, error) {
	for {
		if len(w.todo) == 0 {
			w.todo = []string{"."}
		}
		c := w.todo[0]
		w.todo = w.todo[1:]
		if c == ".." && w.beneath() {
			return -1, unix.EXDEV
		}
		if len(w.todo) > 0 {
			if err := w.step(c); err != nil {
				return -1, err
			}
			continue
		}
		fd, err := w.last(c)
		if err != errLink {
			return fd, err
		}
		if err := w.follow(c); err != nil {
			return -1, err
		}
	}
}

// step enters the directory name, or follows it if it is a symlink.
func (w *walker) step(name string) error {
	fd, err := openat(w.cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	link, err := isLink(fd)
	if err != nil || link {
		unix.Close(fd)
		if err != nil {
			return err
		}
		return w.follow(name)
	}
	w.move(fd)
	return nil
}

// last opens name, the last component, with the caller's flags and
// O_NOFOLLOW; errLink if it is a symlink the caller would follow.
func (w *walker) last(name string) (int, error) {
	flags := int(w.how.Flags)
	if w.mustDir {
		if flags&unix.O_CREAT != 0 {
			return -1, unix.EISDIR
		}
		flags |= unix.O_DIRECTORY
	}
	if flags&unix.O_NOFOLLOW != 0 {
		return openat(w.cur, name, flags, uint32(w.how.Mode))
	}
	fd, err := openat(w.cur, name, flags|unix.O_NOFOLLOW, uint32(w.how.Mode))
	switch {
	case err == nil && flags&unix.O_PATH != 0:
		// O_PATH|O_NOFOLLOW opens a symlink itself.
		link, err := isLink(fd)
		if err != nil || link {
			unix.Close(fd)
			if err != nil {
				return -1, err
			}
			return -1, errLink
		}
	case err == unix.ELOOP || err == unix.ENOTDIR:
		// O_NOFOLLOW on a symlink: ELOOP, or ENOTDIR with O_DIRECTORY.
		if linkAt(w.cur, name) {
			return -1, errLink
		}
	}
	return fd, err
}

// follow puts the target of the symlink name, in the directory reached,
// before the components left, or refuses it.
func (w *walker) follow(name string) error {
	w.hops++
	if w.how.Resolve&unix.RESOLVE_NO_SYMLINKS != 0 || w.hops > maxHops {
		return unix.ELOOP
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(w.cur, &fs); err != nil {
		return err
	}
	if fs.Type == unix.PROC_SUPER_MAGIC {
		return unix.ELOOP
	}
	target, err := readlinkat(w.cur, name)
	if err != nil {
		return err
	}
	if target == "" {
		return unix.ENOENT
	}
	comps, dir := split(target)
	w.mustDir = w.mustDir || dir && len(w.todo) == 0
	w.todo = append(comps, w.todo...)
	if target[0] == '/' {
		if w.beneath() {
			return unix.EXDEV
		}
		return w.root()
	}
	return nil
}

func (w *walker) beneath() bool { return w.how.Resolve&unix.RESOLVE_BENEATH != 0 }

// root moves the walk to "/", or refuses an absolute path beneath.
func (w *walker) root() error {
	if w.beneath() {
		return unix.EXDEV
	}
	fd, err := openat(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	w.move(fd)
	return nil
}

func (w *walker) move(fd int) {
	w.release()
	w.cur, w.owned = fd, true
}

func (w *walker) release() {
	if w.owned {
		unix.Close(w.cur)
		w.owned = false
	}
}

// split returns path's components and whether it ends in "/".
func split(path string) ([]string, bool) {
	var comps []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			comps = append(comps, c)
		}
	}
	return comps, strings.HasSuffix(path, "/")
}

func isLink(fd int) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}

func linkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func readlinkat(dirfd int, name string) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}
