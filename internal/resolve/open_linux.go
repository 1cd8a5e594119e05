package resolve

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// refused is set once openat2 was refused whole in this process: every
// later Open walks by hand at once, rather than make a failing system
// call first on every open (a filter does not go away).
var refused atomic.Bool

// Open opens path relative to dirfd as openat2(2) does with how, EINTR
// retried. Where openat2 is refused whole (ENOSYS, or EPERM from a
// filter), it walks path one component at a time with openat(2) and
// keeps how.Resolve's restrictions itself (see walk). It returns the
// errno, as unix.Openat2 does: callers wrap it.
func Open(dirfd int, path string, how *unix.OpenHow) (int, error) {
	if !refused.Load() {
		fd, err := openat2(dirfd, path, how)
		if !refusedWhole(err) {
			return fd, err
		}
		refused.Store(true)
	}
	return walk(dirfd, path, how)
}

// refusedWhole reports whether err, from openat2, says the call itself is
// refused rather than this open. ENOSYS is the kernel's or a filter's, but
// can be a file's too (a FUSE server's answer); EPERM can be the file's
// (an immutable file opened for writing, O_NOATIME, a seal, fanotify).
// Either counts only if openat2 of "/", which nothing but a refusal of the
// call says ENOSYS or EPERM to, is refused too: a refusal is remembered
// for the process, and the walk is stricter than the kernel in places.
func refusedWhole(err error) bool {
	switch err {
	case unix.ENOSYS, unix.EPERM:
		fd, err := openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
		if err == nil {
			unix.Close(fd)
		}
		return err == unix.EPERM || err == unix.ENOSYS
	}
	return false
}

// openat2 is unix.Openat2, EINTR retried, and EAGAIN a few times: with
// RESOLVE_BENEATH a ".." gives EAGAIN when any rename on the machine
// raced the lookup, and the man page leaves the retry to the caller.
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	for again := 0; ; {
		fd, err := unix.Openat2(dirfd, path, how)
		switch {
		case err == unix.EINTR:
		case err == unix.EAGAIN && how.Resolve&unix.RESOLVE_BENEATH != 0 && again < maxAgain:
			again++
		default:
			return fd, err
		}
	}
}

// maxAgain bounds openat2's retries on EAGAIN.
const maxAgain = 64

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
