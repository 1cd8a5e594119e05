package initsys

import (
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// FDReader reads a descriptor with read(2).
type FDReader int

func (fd FDReader) Read(p []byte) (int, error) {
	n, err := RetryEINTR(func() (int, error) { return unix.Read(int(fd), p) })
	switch {
	case err != nil:
		return 0, os.NewSyscallError("read", err)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// RetryEINTR calls f until it fails with another error than EINTR.
func RetryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// CloseAll closes every descriptor of fds.
func CloseAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// OpenNoSymlinks opens the absolute path with flags, following no
// symlink on the way (ELOOP), with openat(2) one component at a time: a
// session's init has its filter by then, which refuses openat2 (ENOSYS),
// and so RESOLVE_NO_SYMLINKS.
func OpenNoSymlinks(path string, flags int) (int, error) {
	if !strings.HasPrefix(path, "/") {
		return -1, unix.EINVAL
	}
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	rel := strings.Trim(path, "/")
	if rel == "" {
		// "/" itself.
		fd, err := unix.Openat(dir, ".", flags|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		return fd, err
	}
	parts := strings.Split(rel, "/")
	for i, c := range parts {
		if c == "" || c == "." || c == ".." {
			unix.Close(dir)
			return -1, unix.EINVAL
		}
		if i == len(parts)-1 {
			fd, err := unix.Openat(dir, c, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			unix.Close(dir)
			return fd, err
		}
		next, err := unix.Openat(dir, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	unix.Close(dir)
	return -1, unix.EINVAL // not reached: the loop returns at the last component
}
