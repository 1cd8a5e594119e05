package proto

import (
	"errors"
	"syscall"
	"time"
	"wsh/degrade"
)

// ErrNotSupported is the error where wsh has no jail
// (degrade.ErrNotSupported).
var ErrNotSupported = degrade.ErrNotSupported

// ErrNoInit is the error for a program that did not call jail.Init first
// in main (a test binary: in TestMain).
var ErrNoInit = errors.New("jail.Init() was not called: call it first in main (in a test package, in TestMain): the jail's init is this program, re-executed")

// DefaultKillTimeout is how long a cancelled command has between SIGTERM
// and SIGKILL (shell.DefaultKillTimeout).
const DefaultKillTimeout = 2 * time.Second

// ErrInterrupted ends a script whose foreground command an interrupt
// (shell.Runner.Interrupt: a terminal's Ctrl-C to wsh) killed, as bash
// ends one whose foreground job died of the SIGINT it got.
var ErrInterrupted = errors.New("interrupted")

// UnwrapErrno is the errno err wraps, or err.
func UnwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
