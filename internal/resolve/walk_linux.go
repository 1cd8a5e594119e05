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
// when following, every symlink on procfs but those in its root directory
// (/proc/self, /proc/mounts) is ELOOP.
type walker struct {
	how     *unix.OpenHow
	start   int      // the directory the walk started in
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
	if w.beneath() {
		// The start, kept open for stillBeneath (the walk closes what
		// it moves from).
		fd, err := unix.Dup(w.cur)
		if err != nil {
			return -1, err
		}
		w.start = fd
		defer unix.Close(fd)
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
		if err := w.stillBeneath(); err != nil {
			return -1, err
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
	// The link itself, opened once: what is checked is what is read.
	lfd, err := openat(w.cur, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(lfd)
	if err := w.notMagic(lfd); err != nil {
		return err
	}
	target, err := readlinkat(lfd, "")
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

// notMagic refuses (ELOOP) the symlink lfd when it may be a magic link:
// a link on procfs anywhere but in procfs's root directory. The root's
// links (self, thread-self, mounts, net) are plain ones; every other link
// procfs has (/proc/PID/{cwd,root,exe}, fd/N, ns/*, map_files/*) is
// magic, and so is one of them mounted elsewhere: the link's own file
// system is asked, not its directory's.
func (w *walker) notMagic(lfd int) error {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(lfd, &fs); err != nil {
		return err
	}
	if fs.Type != unix.PROC_SUPER_MAGIC {
		return nil
	}
	var dfs unix.Statfs_t
	var dst unix.Stat_t
	if unix.Fstatfs(w.cur, &dfs) == nil && dfs.Type == unix.PROC_SUPER_MAGIC &&
		unix.Fstat(w.cur, &dst) == nil && dst.Ino == procRootIno {
		return nil
	}
	return unix.ELOOP
}

// procRootIno is the inode number of every procfs's root directory
// (PROC_ROOT_INO).
const procRootIno = 1

// stillBeneath checks, before the last component is opened (or made),
// that the directory reached is still beneath the walk's start, as the
// kernel checks at the end of a RESOLVE_BENEATH lookup: a directory on
// the way that was moved out of it while the walk went through it would
// otherwise lead the open outside (EXDEV). It goes up by ".." from the
// directory reached until it meets the start, or the root.
func (w *walker) stillBeneath() error {
	if !w.beneath() {
		return nil
	}
	var start, st unix.Stat_t
	if err := unix.Fstat(w.start, &start); err != nil {
		return err
	}
	fd, err := unix.Dup(w.cur)
	if err != nil {
		return err
	}
	defer func() { unix.Close(fd) }()
	for range maxDepth {
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if st.Dev == start.Dev && st.Ino == start.Ino {
			return nil
		}
		up, err := openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return unix.EXDEV
		}
		var ust unix.Stat_t
		if err := unix.Fstat(up, &ust); err != nil || ust.Dev == st.Dev && ust.Ino == st.Ino {
			unix.Close(up) // the root: the start was not on the way up
			return unix.EXDEV
		}
		unix.Close(fd)
		fd = up
	}
	return unix.EXDEV
}

// maxDepth bounds stillBeneath's way up.
const maxDepth = 4096

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
