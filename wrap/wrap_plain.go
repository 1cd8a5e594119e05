//go:build !linux || !cgo

package wrap

import (
	"context"
	"fmt"
	"sync"

	"mvdan.cc/sh/v3/interp"

	"wsh/config"
	"wsh/degrade"
)

// A Wrapper is one jail's worth of wsh for an interpreter. Here wsh has no
// jail (not Linux, or built without cgo): commands run unsandboxed after
// one warning, or not at all with WSH_REQUIRE_SANDBOX.
type Wrapper struct {
	cfg  config.Config
	s    settings
	warn sync.Once
}

// New makes a Wrapper. Here, with WSH_REQUIRE_SANDBOX set, it returns an
// error that is degrade.ErrNotSupported.
func New(c config.Config, opts ...Option) (*Wrapper, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	if c.RequireSandbox != config.FloorNone && !c.NoSandbox {
		return nil, degrade.NotSupported()
	}
	return &Wrapper{cfg: c, s: s}, nil
}

// Wrap is the exec middleware: here it says once that commands run
// unsandboxed, and calls next.
func (w *Wrapper) Wrap(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		if !w.cfg.NoSandbox {
			w.warn.Do(func() {
				fmt.Fprintln(w.s.warn, degrade.NotSupportedWarning())
			})
		}
		return next(ctx, args)
	}
}

// RunnerOptions are the call handler (CallHandler's) and the exec
// middleware (Wrap): here no handler of the interpreter's own file access
// is wsh's.
func (w *Wrapper) RunnerOptions() []interp.RunnerOption {
	opts := []interp.RunnerOption{interp.ExecHandlers(w.Wrap)}
	if w.s.callHandler != nil {
		opts = append(opts, interp.CallHandler(w.s.callHandler))
	}
	return opts
}

// Status is what is in force for the commands.
func (w *Wrapper) Status() degrade.Status {
	if w.cfg.NoSandbox {
		return degrade.Status{Mode: degrade.OptedOut, Rung: degrade.RungNone}
	}
	return degrade.Status{Mode: degrade.Degraded, Rung: degrade.RungNone, Cause: degrade.NotSupported()}
}

// Close does nothing here.
func (w *Wrapper) Close() error { return nil }
