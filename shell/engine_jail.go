//go:build linux && cgo

package shell

import (
	"context"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/confine"
	"wsh/internal/protect"
	"wsh/wrap"
)

// jailEngine runs commands through a wrap.Wrapper, with wsh's builtins,
// jobs and signals on top (the Jailer's interpreter).
type jailEngine struct {
	w *wrap.Wrapper
	j *confine.Jailer
}

func newEngine(s *settings) (engine, error) {
	w, err := wrap.New(*s.cfg, wrap.Dir(s.dir), wrap.Warnings(s.warnTo()), wrap.KillTimeout(s.killTimeout))
	if err != nil {
		return nil, err
	}
	j := confine.OfWrapper(w)
	j.WarnGate, j.CallHandler = s.warnGate(), s.callHandler
	// Before any command runs: what a command changes in them is put
	// back from this.
	j.GivenStreams(s.stdin, s.stdout, s.stderr)
	return jailEngine{w, j}, nil
}

func (e jailEngine) newInterp(environ, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	return e.j.NewInterp(environ, params, opts...)
}

func (e jailEngine) close() error    { return e.w.Close() }
func (e jailEngine) interrupt() bool { return e.j.Interrupt() }

func (e jailEngine) startRun(ctx context.Context) (context.Context, func(error) error) {
	return e.j.StartRun(ctx)
}
func (e jailEngine) writable() []string { return e.j.Writable() }

func (e jailEngine) blocked() []Blocked {
	var out []Blocked
	for _, r := range e.j.Blocked() {
		out = append(out, Blocked{Host: r.Host, Port: r.Port, Reason: r.Reason, Count: r.Count})
	}
	return out
}

func (e jailEngine) status() Status { return e.w.Status() }

// DefaultProtected returns the paths, relative to each writable path, that
// are read-only in the jail unless WSH_PROTECT says otherwise.
func DefaultProtected() []string { return protect.DefaultProtected() }
