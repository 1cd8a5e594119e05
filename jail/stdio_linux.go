package jail

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// reopenStdio gives the target its read-only standard streams through the
// jail's own view of the file system. A descriptor opened outside holds the
// host's read-write mount: through /proc/self/fd/N the target could open
// the same file again for writing (`echo x >> /proc/self/fd/0`). Opened
// again by its path here, on the read-only root, such a reopening gets
// EROFS. The offset is kept. A stream that is not a regular file, is open
// for writing, or whose path no longer leads to the same file, stays as it
// is.
func reopenStdio(*setupState) error {
	for fd := 0; fd <= 2; fd++ {
		if err := reopenReadOnly(fd); err != nil {
			return err
		}
	}
	return nil
}

func reopenReadOnly(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // closed, or a pipe, socket, tty, device
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ACCMODE != unix.O_RDONLY {
		return nil
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || len(path) == 0 || path[0] != '/' {
		return nil
	}
	nfd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK&fl, 0)
	if err != nil {
		return nil // not reachable by its path in the jail (deleted, hidden)
	}
	defer unix.Close(nfd)
	var nst unix.Stat_t
	if unix.Fstat(nfd, &nst) != nil || nst.Dev != st.Dev || nst.Ino != st.Ino {
		return nil
	}
	off, err := unix.Seek(fd, 0, 1)
	if err == nil {
		_, err = unix.Seek(nfd, off, 0)
	}
	if err != nil {
		return os.NewSyscallError("lseek", err)
	}
	return os.NewSyscallError("dup3", unix.Dup3(nfd, fd, 0))
}
