package jail

import (
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// CompileFilter builds the policy (without the groups in skip) and returns
// its BPF program, so that the parent compiles it once and every jail init
// loads it with seccomp(2) instead of building it again with libseccomp.
// It uses ExportBPF to a memfd: ExportBPFMem needs libseccomp 2.6, and
// Debian 12 has 2.5.4.
func CompileFilter(skip ...string) ([]byte, error) {
	f, err := BuildFilter(skip...)
	if err != nil {
		return nil, err
	}
	defer f.Release()
	fd, err := unix.MemfdCreate("wsh-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	mem := os.NewFile(uintptr(fd), "wsh-seccomp")
	defer mem.Close()
	if err := f.ExportBPF(mem); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := mem.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	prog, err := io.ReadAll(mem)
	if err != nil {
		return nil, err
	}
	if err := checkProgram(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// checkProgram checks that prog is a whole number of BPF instructions,
// within the kernel's limit.
func checkProgram(prog []byte) error {
	const insn = int(unsafe.Sizeof(unix.SockFilter{}))
	if len(prog) == 0 || len(prog)%insn != 0 || len(prog)/insn > 4096 {
		return fmt.Errorf("seccomp: a program of %d bytes is not a BPF program: %w", len(prog), unix.EINVAL)
	}
	return nil
}

// loadProgram installs prog on every thread of this process (TSYNC), as
// libseccomp's Load does. no_new_privs is already set.
func loadProgram(prog []byte) error {
	if err := checkProgram(prog); err != nil {
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
