package degrade

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// ErrNotSupported is the cause where wsh has no jail: not Linux, or a wsh
// built without cgo (no seccomp compiler, no spawn).
var ErrNotSupported = errors.New("the jail is not supported here")

// A Mode says how external commands run.
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

// String is the mode's name, as wsh doctor and wsh version print it.
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

// A Status is what is in force for external commands.
type Status struct {
	Mode Mode
	// Rung is what confines external commands: RungFull (the jail),
	// RungLandlock or RungSeccomp (a lower rung of the ladder, where the
	// host refused the full jail: no namespaces; docs/sandbox.md, "The
	// ladder"), or RungNone (opted out, refusing, or unsandboxed).
	Rung Rung
	// Cause is, when Degraded or Refusing, the host's refusal.
	Cause *JailError
	// LastFailure is the last jail that could not be made for a command
	// for a reason other than the host refusing it (that command did not
	// run, and got 126), if any: the jail worked when it was first made.
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
	// steps down the ladder.
	Denied bool
	// Err is the cause when it is not only an errno (a start error,
	// ErrNotSupported).
	Err error
	msg string
}

// Error is the one-line reason, as the one warning gives it.
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

// JailError is the verdict, when it is not Ran, as an error.
func (v Verdict) JailError() *JailError {
	return &JailError{Mode: v.Mode, Step: v.Step.String(), Errno: v.Errno, Denied: v.Kind == Denied || v.Kind == Refused, Err: v.Err, msg: v.Reason()}
}

// NotSupported is the JailError where this build of wsh has no jail: not
// Linux, or built without cgo.
func NotSupported() *JailError {
	why := "not Linux (GOOS=" + runtime.GOOS + ")"
	if runtime.GOOS == "linux" {
		why = "this wsh was built without cgo, so without its seccomp compiler and spawn"
	}
	return &JailError{Err: ErrNotSupported, msg: fmt.Sprintf("jail: %v: %s", ErrNotSupported, why)}
}

// NotSupportedWarning is the one warning where this build has no jail
// and commands run unsandboxed.
func NotSupportedWarning() string {
	return "wsh: warning: " + NotSupported().Error() + "; running commands unsandboxed (no policy of wsh's applies, to commands, " +
		"builtins or redirections). Set WSH_REQUIRE_SANDBOX=1 to fail instead."
}
