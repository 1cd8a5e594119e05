package proto

import "golang.org/x/sys/unix"

// Rights returns the descriptors the SCM_RIGHTS messages in oob carried
// (a channel's control data, as recvmsg gave it).
func Rights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

// CloseRights closes the descriptors fds (as Rights gave them); a
// negative one is none.
func CloseRights(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
