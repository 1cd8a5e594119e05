//go:build linux && cgo

package wrap

import (
	"os"

	"mvdan.cc/sh/v3/interp"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/jailer"
)

// A Wrapper is one jail's worth of wsh for an interpreter: its
// configuration, its ladder, its session. It is safe for concurrent use;
// close it when its interpreters are done.
type Wrapper struct{ j *jailer.Jailer }

func init() {
	jailer.OfWrapper = func(w any) *jailer.Jailer { return w.(*Wrapper).j }
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
	j, err := jailer.NewJailer(c, s.dir, os.Environ(), s.warn)
	if err != nil {
		return nil, err
	}
	j.KillTimeout = s.killTimeout
	if v, failed := j.StartFailure(); failed {
		j.Close()
		return nil, v.JailError()
	}
	return &Wrapper{j}, nil
}

// Wrap is the exec middleware, for interp.ExecHandlers: every command
// that reaches it runs in the jail, and next is called only where no
// confinement is in force (opted out, or the bottom of the ladder).
func (w *Wrapper) Wrap(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return w.j.Middleware(next)
}

// RunnerOptions are everything an interp.New needs to be wsh, after the
// caller's own options: the exec middleware (Wrap, after the caller's own
// middlewares given before it), the open, read-dir, stat and access
// handlers (the shell's own file access, done in the jail), and the
// environment seen through the jail (it wraps the caller's interp.Env,
// which must come before).
func (w *Wrapper) RunnerOptions() []interp.RunnerOption {
	return append(w.j.RunnerOptions(), interp.ExecHandlers(w.Wrap))
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
