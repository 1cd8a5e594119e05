package proto

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// DialKeeper connects to the keeper listening at name in the socket
// directory dir (a descriptor: the directory opened by identity), with a
// receive timeout: a keeper that stops answering must not hang every
// command (it answers in well under a millisecond: a clone of its mount;
// a new mount at most every KeeperSpec.Refresh).
func DialKeeper(dir int, name string) (int, error) {
	c, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	tv := unix.Timeval{Sec: 5}
	unix.SetsockoptTimeval(c, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	addr := &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(dir) + "/" + name}
	for {
		err = unix.Connect(c, addr)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(c)
		return -1, err
	}
	return c, nil
}
