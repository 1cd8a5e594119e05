package proto

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// FaultSignals are the signals Go's runtime treats as a fault (os/signal,
// "Synchronous signals"; SIGSTKFLT and SIGSYS throw): it dies of one whose
// si_code says the kernel sent it, caught or not, and of one sent by kill
// unless it is caught. The seccomp policy refuses the first kind to a
// target (group siginfo); the init catches the second (dropped).
var FaultSignals = []syscall.Signal{unix.SIGILL, unix.SIGTRAP, unix.SIGBUS, unix.SIGFPE,
	unix.SIGSEGV, unix.SIGSTKFLT, unix.SIGSYS}
