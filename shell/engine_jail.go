//go:build linux && cgo

package shell

import (
	"context"
	"os"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/jailer"
	"wsh/internal/verdict"
)

// jailEngine runs commands through a Jailer.
type jailEngine struct{ j *jailer.Jailer }

func newEngine(s *settings) (engine, error) {
	// The jail's shape (TMPDIR writable, the home and wsh's state
	// directory) comes from the process's environment, not from Env.
	j, err := jailer.NewJailer(*s.cfg, s.dir, os.Environ(), s.warnTo())
	if err != nil {
		return nil, err
	}
	j.KillTimeout, j.WarnGate, j.CallHandler = s.killTimeout, s.warnGate(), s.callHandler
	// Before any command runs: what a command changes in them is put
	// back from this.
	j.GivenStreams(s.stdin, s.stdout, s.stderr)
	if v, failed := j.StartFailure(); failed {
		j.Close()
		return nil, jailError(v)
	}
	return jailEngine{j}, nil
}

func (e jailEngine) newInterp(environ, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	return e.j.NewInterp(environ, params, opts...)
}

func (e jailEngine) close() error    { return e.j.Close() }
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

func (e jailEngine) status() Status {
	cfg := e.j.Config()
	var st Status
	refused, isRefused := e.j.Refused()
	switch v, degraded := e.j.Degraded(); {
	case cfg.NoSandbox:
		st.Mode = OptedOut
	case isRefused:
		st.Mode, st.Cause = Refusing, jailError(refused)
	case degraded:
		st.Mode, st.Cause = Degraded, jailError(v)
	default:
		st.Mode = Confined
	}
	if v, ok := e.j.LastFailure(); ok {
		st.LastFailure = jailError(v)
	}
	switch st.Mode {
	case OptedOut, Refusing:
		st.Rung = "none"
	default:
		st.Rung = e.j.Rung().String()
	}
	return st
}

// jailError is the JailError of a verdict that is not Ran.
func jailError(v verdict.Verdict) *JailError {
	return &JailError{Mode: v.Mode, Step: v.Step.String(), Errno: v.Errno, Denied: v.Kind == verdict.Denied || v.Kind == verdict.Refused, Err: v.Err, msg: v.Reason()}
}

// DefaultProtected returns the paths, relative to each writable path, that
// are read-only in the jail unless WSH_PROTECT says otherwise.
func DefaultProtected() []string { return jailer.DefaultProtected() }
