package shell

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A homeView is the jail's copy-on-write home as the shell's own
// operations (redirections, source, globbing, cd, test, the command
// search) see it: through a detached mount of the same overlay the jails
// mount, held by descriptor. A file the shell writes to the home is the
// one a later command reads, and the other way round.
type homeView struct {
	path     string   // the host's home, where the jail shows the overlay
	root     int      // O_PATH descriptor of the mount's root
	dev      uint64   // the overlay's device
	excluded []string // paths beneath path the jail shows from the host
}

// newHomeView makes the view from a detached mount of the home, which it
// keeps. excluded are the writable paths and the host's mounts beneath
// the home, which jails bind on top of it.
func newHomeView(path string, mount *os.File, excluded []string) (*homeView, error) {
	fd, err := unix.Openat(int(mount.Fd()), ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	mount.Close()
	if err != nil {
		return nil, os.NewSyscallError("openat(home)", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fstat(home)", err)
	}
	v := &homeView{path: path, root: fd, dev: st.Dev}
	for _, e := range excluded {
		if under(e, path) && e != path {
			v.excluded = append(v.excluded, e)
		}
	}
	return v, nil
}

func (v *homeView) close() {
	if v != nil {
		unix.Close(v.root)
	}
}

// rel returns real's path relative to the home's root, when real (a path
// without symlinks) is one the jail shows from the copy-on-write home.
func (v *homeView) rel(real string) (string, bool) {
	if v == nil || !under(real, v.path) {
		return "", false
	}
	for _, e := range v.excluded {
		if under(real, e) {
			return "", false
		}
	}
	r := strings.TrimPrefix(real[len(v.path):], "/")
	if r == "" {
		r = "."
	}
	return r, true
}

// open opens rel, a path without symlinks, beneath the home's root: no
// symlink (one a command puts there meanwhile) or ".." can lead it out.
func (v *homeView) open(rel string, flag int, perm os.FileMode) (*os.File, error) {
	how := &unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for {
		fd, err := unix.Openat2(v.root, rel, how)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), v.path+"/"+rel), nil
	}
}

// isLink reports whether rel is a symlink in the home.
func (v *homeView) isLink(rel string) (bool, error) {
	f, err := v.open(rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}

// readlink reads the symlink rel of the home.
func (v *homeView) readlink(rel string) (string, error) {
	f, err := v.open(rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(int(f.Fd()), "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// pathOf returns the path, in the jail's view, of a descriptor opened
// through the home's mount, whose /proc/self/fd link the kernel gives
// relative to that mount's root.
func (v *homeView) pathOf(fd int) (string, bool) {
	l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(l, "/") || strings.HasSuffix(l, " (deleted)") {
		return "", false
	}
	if l == "/" {
		return v.path, true
	}
	return v.path + l, true
}
