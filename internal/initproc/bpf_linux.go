package initproc

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// loadProgram installs prog on every thread of this process (TSYNC), as
// libseccomp's Load does. no_new_privs is already set.
func loadProgram(prog []byte) error {
	if err := proto.CheckFilter(prog); err != nil {
		return err
	}
	insns := make([]unix.SockFilter, len(prog)/int(unsafe.Sizeof(unix.SockFilter{})))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&insns[0])), len(prog)), prog)
	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	switch {
	case errno != 0:
		return os.NewSyscallError("seccomp(SECCOMP_SET_MODE_FILTER)", errno)
	case r != 0:
		// TSYNC: thread r could not be synchronised.
		return os.NewSyscallError("seccomp(TSYNC)", unix.EAGAIN)
	}
	return nil
}

// loadSeccomp loads the program the parent compiled. The init has no
// compiler of its own (it is built without cgo, so without libseccomp): an
// empty or malformed program fails the step.
func loadSeccomp(st *setupState) error {
	return loadProgram(st.spec.Filter)
}
