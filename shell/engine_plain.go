//go:build !linux || !cgo

package shell

import (
	"context"
	"fmt"
	"sync"
	"wsh/config"
	"wsh/degrade"
	"wsh/internal/job"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// plainEngine is where wsh has no jail (not Linux, or built without cgo):
// commands run unsandboxed, as the configuration allows, and no policy of
// wsh's applies.
type plainEngine struct {
	s    *settings
	warn sync.Once
	gate func() bool
}

func newEngine(s *settings) (engine, error) {
	if s.cfg.RequireSandbox != config.FloorNone && !s.cfg.NoSandbox {
		return nil, degrade.NotSupported()
	}
	return &plainEngine{s: s, gate: s.warnGate()}, nil
}

func (e *plainEngine) newInterp(environ, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	run := interp.DefaultExecHandler(e.s.killTimeout)
	mw := func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			if args[0] == job.StartCall || args[0] == job.EndCall {
				return nil // wsh's job bookkeeping (job.Mark): no job table here
			}
			if !e.s.cfg.NoSandbox {
				e.warn.Do(func() {
					if e.gate == nil || e.gate() {
						fmt.Fprintln(e.s.warnTo(), degrade.NotSupportedWarning())
					}
				})
			}
			return run(ctx, args)
		}
	}
	all := append([]interp.RunnerOption{interp.Env(expand.ListEnviron(environ...))}, opts...)
	if own := e.s.callHandler; own != nil {
		all = append(all, interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			if job.Internal(args) {
				return args, nil // wsh's own, not the script's
			}
			return own(ctx, args)
		}))
	}
	r, err := interp.New(append(all, interp.ExecHandlers(mw))...)
	if err != nil {
		return nil, err
	}
	if params != nil {
		if err := interp.Params(params...)(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (e *plainEngine) close() error       { return nil }
func (e *plainEngine) writable() []string { return nil }

func (e *plainEngine) status() Status {
	if e.s.cfg.NoSandbox {
		return Status{Mode: OptedOut, Rung: degrade.RungNone}
	}
	return Status{Mode: Degraded, Rung: degrade.RungNone, Cause: degrade.NotSupported()}
}

// DefaultProtected returns the paths, relative to each writable path, that
// are read-only in the jail unless WSH_PROTECT says otherwise: none here.
func DefaultProtected() []string { return nil }

func (e *plainEngine) blocked() []Blocked { return nil }

func (e *plainEngine) startRun(ctx context.Context) (context.Context, func(error) error) {
	return ctx, func(err error) error { return err }
}

// interrupt: mvdan.cc/sh's own exec handler runs commands here, which
// has no way to signal them.
func (e *plainEngine) interrupt() bool { return false }
