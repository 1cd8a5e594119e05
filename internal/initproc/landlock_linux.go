package initproc

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's scopes (ABI 6, Linux 6.12): a domain's processes cannot
// connect to an abstract unix socket bound outside the domain, nor signal
// a process outside it.
const (
	landlockScopeAbstractUnix = 1 << 0
	landlockScopeSignal       = 1 << 1
	landlockCreateVersion     = 1 << 0 // LANDLOCK_CREATE_RULESET_VERSION
)

// landlockRulesetAttr is struct landlock_ruleset_attr as of ABI 6.
type landlockRulesetAttr struct {
	handledAccessFS, handledAccessNet, scoped uint64
}

// landlockScopes puts the jail in a Landlock domain that restricts nothing
// but its scopes. Abstract unix sockets belong to a network namespace: with
// WSH_NETWORK=host the jail shares the host's, and without the scope a
// command could connect to any host daemon's abstract socket (an X server,
// a D-Bus or systemd one). Signals are already scoped by the PID
// namespace. Where the kernel has no Landlock, or an ABI before 6, the
// step does nothing (docs/sandbox.md).
func landlockScopes(*setupState) error {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateVersion)
	switch {
	case errno == unix.ENOSYS || errno == unix.EOPNOTSUPP:
		return nil // no Landlock here, or off at boot
	case errno != 0:
		return os.NewSyscallError("landlock_create_ruleset(version)", errno)
	case abi < 6:
		return nil
	}
	attr := landlockRulesetAttr{scoped: landlockScopeAbstractUnix | landlockScopeSignal}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return os.NewSyscallError("landlock_create_ruleset", errno)
	}
	defer unix.Close(int(fd))
	// landlock_restrict_self acts on the calling thread, which is the one
	// that forks the target (the init runs locked to its thread), and
	// needs no_new_privs, set in the step before.
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return os.NewSyscallError("landlock_restrict_self", errno)
	}
	return nil
}
