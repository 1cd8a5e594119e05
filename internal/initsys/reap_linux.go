package initsys

import "golang.org/x/sys/unix"

// ReapAll waits until every other process of the jail is gone. The
// kernel would kill and wait for them itself once PID 1 exits, but only
// after PID 1 has closed its descriptors: the lock of the home's mount
// (HomeLockFD) must outlast every process that can still write to the
// home's mount.
func ReapAll() {
	for {
		_, err := unix.Wait4(-1, nil, unix.WALL, nil)
		if err != unix.EINTR && err != nil {
			return
		}
	}
}
