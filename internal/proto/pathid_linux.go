package proto

import (
	"os"

	"golang.org/x/sys/unix"

	"wsh/internal/resolve"
)

// NewPathID records the identity of path, which must be absolute and
// resolved (no symlink in it).
func NewPathID(path string) (PathID, error) {
	fd, err := OpenNoSymlinks(path)
	if err != nil {
		return PathID{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return PathID{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return PathID{Path: path, Dev: st.Dev, Ino: st.Ino}, nil
}

// Open opens id's path as an O_PATH descriptor, following no symlink, and
// checks that it is still the same file; ESTALE when it is not.
func (id PathID) Open() (int, error) {
	fd, err := OpenNoSymlinks(id.Path)
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "fstat", Path: id.Path, Err: err}
	}
	if st.Dev != id.Dev || st.Ino != id.Ino {
		unix.Close(fd)
		return -1, &os.PathError{Op: "verify (it changed since wsh started)", Path: id.Path, Err: unix.ESTALE}
	}
	return fd, nil
}

// Same reports whether the file st describes is id's.
func (id PathID) Same(st *unix.Stat_t) bool { return st.Dev == id.Dev && st.Ino == id.Ino }

// OpenNoSymlinks opens path, a directory, with no symlink followed on the
// way (RESOLVE_NO_SYMLINKS), for a PathID or a cover of the jail.
func OpenNoSymlinks(path string) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := resolve.Open(unix.AT_FDCWD, path, how)
	if err != nil {
		return -1, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
	return fd, nil
}
