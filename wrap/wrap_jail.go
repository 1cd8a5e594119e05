//go:build linux && cgo

package wrap

import (
	"os"

	"mvdan.cc/sh/v3/interp"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/confine"
)

// A Wrapper is one jail's worth of wsh for an interpreter: its
// configuration, its ladder, its session. It is safe for concurrent use;
// close it when its interpreters are done.
type Wrapper struct {
	j           *confine.Jailer
	callHandler interp.CallHandlerFunc
}

func init() {
	confine.OfWrapper = func(w any) *confine.Jailer { return w.(*Wrapper).j }
}

// New makes a Wrapper with the configuration c (config.Load of the
// process's environment, say). A configuration error is a *config.Error; a
// jail that cannot be made, for a reason other than the host refusing it,
// is a *degrade.JailError; a program that did not call jail.Init first
// gets an error saying so. The jail's shape (the TMPDIR that is writable,
// the HOME that is copy-on-write, wsh's state directory) comes from the
// process's environment, not from the interpreter's.
func New(c config.Config, opts ...Option) (*Wrapper, error) {
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	j, err := confine.NewJailer(c, s.dir, os.Environ(), s.warn)
	if err != nil {
		return nil, err
	}
	j.KillTimeout = s.killTimeout
	if v, failed := j.StartFailure(); failed {
		j.Close()
		return nil, v.JailError()
	}
	return &Wrapper{j, s.callHandler}, nil
}

// Wrap is the exec middleware, for interp.ExecHandlers: every command
// that reaches it runs in the jail, and next is called only where no
// confinement is in force (opted out, or the bottom of the ladder). A
// command refused under WSH_REQUIRE_SANDBOX ends the script with status
// 126. Alone, without RunnerOptions, it confines the commands only: the
// interpreter's own file access (redirections, globs, test, cd, source)
// is then on the host, and mvdan.cc/sh opens "$TMPDIR/sh-interp-*"
// itself, following symlinks, in a TMPDIR commands can write.
func (w *Wrapper) Wrap(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return w.j.Middleware(next)
}

// RunnerOptions are everything an interp.New needs to be wsh, after the
// caller's own options (its interp.Env, interp.Dir, interp.StdIO, and the
// exec middlewares that are to see every command): the open, stat,
// read-dir and access handlers (the shell's own file access, done in the
// jail), a wrap of the environment (~user is the jail's; mvdan.cc/sh's
// FIFOs are made in wsh's directory), the call handler (CallHandler's,
// then wsh's lookups done in the jail: type or command -v of a path,
// source's PATH search, pwd -P), and the exec middleware (Wrap). Give
// each interpreter its own: they keep its state (a script wsh stopped).
// An interp.Env, interp.CallHandler or file handler of the caller's given
// after them replaces wsh's: the environment or call handler so replaced
// stops the script at its first command, saying so.
func (w *Wrapper) RunnerOptions() []interp.RunnerOption {
	return w.j.RunnerOptions(w.callHandler)
}

// Status is what is in force for the commands.
func (w *Wrapper) Status() degrade.Status { return w.j.Status() }

// Close ends the Wrapper's jail and what still runs in it, and removes
// what it made on the host; it says first what wsh says at the end of a
// script (a git config the last command made with keys the host's git
// would run). Commands run after it fail.
func (w *Wrapper) Close() error {
	w.j.EndChecks()
	return w.j.Close()
}
