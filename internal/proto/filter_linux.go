package proto

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp program travels in the spec (Spec.Filter): compiled by the
// parent, loaded by the init.

// CheckFilter checks that prog is a whole number of BPF instructions,
// within the kernel's limit.
func CheckFilter(prog []byte) error {
	const insn = int(unsafe.Sizeof(unix.SockFilter{}))
	if len(prog) == 0 || len(prog)%insn != 0 || len(prog)/insn > 4096 {
		return fmt.Errorf("seccomp: a program of %d bytes is not a BPF program: %w", len(prog), unix.EINVAL)
	}
	return nil
}
