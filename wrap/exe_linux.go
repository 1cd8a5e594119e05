package wrap

import (
	"io"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// selfCopy is a sealed in-memory copy of this binary, made once per
// process, from which every jail init is executed. Nobody can change its
// mode or contents: a command (of this session or another) that makes the
// wsh file unexecutable cannot make a jail fail with EACCES at exec, which
// would look like the host refusing the jail (mode 1).
var selfCopy = sync.OnceValues(copySelf)

// exePath is what a jail init is executed from: the sealed copy, or
// /proc/self/exe where the kernel refuses executable memfds
// (vm.memfd_noexec=2).
func exePath() string {
	f, err := selfCopy()
	if err != nil {
		return SelfExe
	}
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
}

func copySelf() (*os.File, error) {
	fd, err := unix.MemfdCreate("wsh", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err == unix.EINVAL {
		// Before Linux 6.3 there is no MFD_EXEC: memfds are executable.
		fd, err = unix.MemfdCreate("wsh", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	mem := os.NewFile(uintptr(fd), "wsh")
	self, err := os.Open(SelfExe)
	if err == nil {
		_, err = io.Copy(mem, self)
		self.Close()
	}
	if err == nil {
		_, err = unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	}
	if err == nil {
		err = mem.Chmod(0o555)
	}
	if err != nil {
		mem.Close()
		return nil, err
	}
	return mem, nil
}
