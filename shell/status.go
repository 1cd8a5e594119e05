package shell

import (
	"fmt"
	"syscall"

	"wsh/internal/proto"
)

// DefaultKillTimeout is how long a cancelled command has between SIGTERM and
// SIGKILL.
const DefaultKillTimeout = proto.DefaultKillTimeout

// ErrNoInit is New's error for a program that did not call jail.Init first
// in main (a test binary: in TestMain). New returns it at once, before any
// process is started.
var ErrNoInit = proto.ErrNoInit

// ErrNotSupported is the cause where wsh has no jail: not Linux, or a wsh
// built without cgo. With WSH_REQUIRE_SANDBOX, New returns an error that is
// it (errors.Is); otherwise the Runner is Degraded with it as the cause.
var ErrNotSupported = proto.ErrNotSupported

// A Mode says how a Runner's external commands run.
type Mode int

const (
	// Confined: every external command runs in the jail.
	Confined Mode = iota + 1
	// Degraded: the host refused the jail (Status.Cause says how), and
	// external commands run on a lower rung of the ladder (Status.Rung),
	// or unsandboxed; the one warning said so.
	Degraded
	// Refusing: the host refused the jail and WSH_REQUIRE_SANDBOX is set:
	// external commands do not run (exit status 126).
	Refusing
	// OptedOut: WSH_NO_SANDBOX: external commands run unsandboxed, as the
	// configuration asks, without a warning.
	OptedOut
)

func (m Mode) String() string {
	switch m {
	case Confined:
		return "confined"
	case Degraded:
		return "degraded"
	case Refusing:
		return "refusing"
	case OptedOut:
		return "opted out"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// A Status is what is in force for a Runner's external commands.
type Status struct {
	Mode Mode
	// Rung is what confines external commands: "full" (the jail),
	// "landlock" or "seccomp" (a lower rung of the ladder, where the host
	// refused the full jail: no namespaces; docs/sandbox.md, "The
	// ladder"), or "none".
	Rung string
	// Cause is, when Degraded or Refusing, the host's refusal.
	Cause *JailError
	// LastFailure is the last jail that could not be made for a command
	// for a reason other than the host refusing it (that command did not
	// run, and got 126), if any: the jail worked when the Runner was made.
	LastFailure *JailError
}

// A JailError is a jail that could not be made: refused by the host
// (Denied) or failed for another reason.
type JailError struct {
	// Mode is 1 when starting the jail's init failed (the clone, the id
	// maps, the exec of the init), 2 when a setup step inside it did; 0
	// when there is no jail to start (ErrNotSupported).
	Mode int
	// Step names what failed: "clone" in mode 1, the setup step in mode 2
	// ("mount-private", "seccomp", ...).
	Step string
	// Errno is the error number, when the cause is one.
	Errno syscall.Errno
	// Denied: the host refused the jail (EPERM or EACCES), which is what
	// degrades a Runner.
	Denied bool
	// Err is the cause when it is not only an errno (a start error,
	// ErrNotSupported).
	Err error
	msg string
}

func (e *JailError) Error() string { return e.msg }

// Unwrap returns Err, or else Errno.
func (e *JailError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	if e.Errno != 0 {
		return e.Errno
	}
	return nil
}
