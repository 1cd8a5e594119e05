package initproc

import (
	"os"

	"golang.org/x/sys/unix"
)

// cloexecFrom3 marks every descriptor from 3 up close-on-exec, so that the
// target sees neither the sentinel nor anything wsh was started with. It
// also makes this init non-dumpable: the init holds the sentinel until the
// target is exec'd, and a dumpable init would let the target (same uid, no
// capabilities) reopen it, or any descriptor of the init, through
// /proc/1/fd (proc(5), "ptrace access mode").
func cloexecFrom3(*setupState) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_DUMPABLE)", err)
	}
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err != unix.ENOSYS && err != unix.EINVAL {
		return os.NewSyscallError("close_range", err)
	}
	// Before Linux 5.11: mark them one by one, up to RLIMIT_NOFILE.
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return os.NewSyscallError("getrlimit", err)
	}
	for fd := 3; uint64(fd) < lim.Cur; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return os.NewSyscallError("fcntl", err)
		}
	}
	return nil
}

// dropCapabilities empties every capability set of this thread: the
// bounding set first (dropping it needs CAP_SETPCAP), then the ambient set,
// then effective, permitted and inheritable. The bounding set is dropped
// from 0 up to the first capability the kernel does not know (EINVAL), which
// is cap_last_cap + 1, without reading /proc/sys/kernel/cap_last_cap.
func dropCapabilities(*setupState) error {
	return dropCapabilitiesBut(-1)
}

// dropCapabilitiesBut is dropCapabilities that keeps capability keep (-1:
// none) in the bounding, effective and permitted sets.
func dropCapabilitiesBut(keep int) error {
	for c := 0; ; c++ {
		if c == keep {
			continue
		}
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL && c > 0 {
			break
		}
		if err != nil {
			return os.NewSyscallError("prctl(PR_CAPBSET_DROP)", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if keep >= 0 {
		data[keep/32].Effective = 1 << (keep % 32)
		data[keep/32].Permitted = 1 << (keep % 32)
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	return nil
}

// dropCapabilitiesLower is dropCapabilities in the host's user namespace:
// a process without CAP_SETPCAP (any user but root, there) cannot drop its
// bounding set, which then stays as it is (no_new_privs keeps a setuid
// binary from raising anything in it); every other set is emptied.
func dropCapabilitiesLower(st *setupState) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capget", err)
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		return dropCapabilities(st)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", err)
	}
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	return nil
}

func setNoNewPrivs(*setupState) error {
	return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
}
