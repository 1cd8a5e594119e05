package shell

import (
	"context"
	"io"
	"sync/atomic"

	"mvdan.cc/sh/v3/interp"
)

// An engine runs a Runner's external commands: in the jail (engine_jail.go)
// or, where wsh has no jail, unsandboxed (engine_plain.go).
type engine interface {
	newInterp(environ, params []string, opts ...interp.RunnerOption) (*interp.Runner, error)
	close() error
	status() Status
	writable() []string
	blocked() []Blocked
	// startRun gives a Run its context, and what maps the Run's error
	// when it is over (a run ended by a command refused under
	// WSH_REQUIRE_SANDBOX: 126).
	startRun(ctx context.Context) (context.Context, func(error) error)
	interrupt() bool
}

// warnedProcess is set once the one warning was said on a Runner's stderr
// in this process: it is said once per process there, not once per Runner.
var warnedProcess atomic.Bool

// warnGate says whether the one warning is to be said now: always to a
// writer chosen with Warnings (once per Runner, which the engine keeps),
// once per process otherwise.
// A Runner whose stderr discards says nothing, and does not use up the
// process's warning: a later Runner with a stderr says it.
func (s *settings) warnGate() func() bool {
	if s.warnings != nil {
		return nil
	}
	if s.stderr == io.Discard {
		return func() bool { return false }
	}
	return func() bool { return warnedProcess.CompareAndSwap(false, true) }
}

// warnTo is where wsh's notices go.
func (s *settings) warnTo() io.Writer {
	if s.warnings != nil {
		return s.warnings
	}
	return s.stderr
}
