//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/job"
	"wsh/internal/proto"
)

// A runState is one Run of a script through an interpreter of this
// Jailer's: a command refused under WSH_REQUIRE_SANDBOX ends it.
type runState struct {
	failedClosed atomic.Bool
}

type runKey struct{}

// errFailedClosed is the error a refused command stops its interpreter
// with (not an interp.ExitStatus, which would let the script go on);
// StartRun's end turns it into the status.
var errFailedClosed = errors.New("a command was refused: WSH_REQUIRE_SANDBOX is set")

// StartRun returns the context for one Run of a script, and end, which
// is given what the Run returned once it is over and returns what the
// Run is to return: interp.ExitStatus(126) when a command was refused
// because WSH_REQUIRE_SANDBOX is set. That ended the Run there: the
// interpreter that ran the command stops at once, and every other one of
// the Run (the script's, while a background job was refused) at its next
// command, builtins included (the call handler). Background jobs still
// running go on, as they would after any Run.
//
// No context is cancelled, so that nothing of a Run outlives it by
// holding its parent context's resources.
func (j *Jailer) StartRun(ctx context.Context) (context.Context, func(error) error) {
	rs := &runState{}
	return context.WithValue(ctx, runKey{}, rs), func(err error) error {
		if rs.failedClosed.Load() {
			return interp.ExitStatus(126)
		}
		return err
	}
}

// failClosed marks the Run of ctx, if it has one, as failed closed, and
// returns the error that stops the interpreter.
func failClosed(ctx context.Context) error {
	if rs, ok := ctx.Value(runKey{}).(*runState); ok {
		rs.failedClosed.Store(true)
	}
	return errFailedClosed
}

// stopped is the call handler's check: a Run that failed closed runs
// nothing more.
func stopped(ctx context.Context) error {
	if rs, ok := ctx.Value(runKey{}).(*runState); ok && rs.failedClosed.Load() {
		return errFailedClosed
	}
	return nil
}

// A fgCommand is an external command of the foreground (not of a
// background job) while it runs: the one an interrupt reaches.
type fgCommand struct {
	sigs        chan syscall.Signal
	interrupted atomic.Bool
}

// foregrounds are the foreground commands running.
type foregrounds struct {
	mu  sync.Mutex
	set map[*fgCommand]struct{}
}

// start registers c's command as running, unless it is a background
// job's; nil then.
func (f *foregrounds) start(c *command) *fgCommand {
	if job.InBackground(c.hc.Env) {
		return nil
	}
	fc := &fgCommand{sigs: make(chan syscall.Signal, 4)}
	f.mu.Lock()
	if f.set == nil {
		f.set = map[*fgCommand]struct{}{}
	}
	f.set[fc] = struct{}{}
	f.mu.Unlock()
	return fc
}

func (f *foregrounds) end(fc *fgCommand) {
	if fc == nil {
		return
	}
	f.mu.Lock()
	delete(f.set, fc)
	f.mu.Unlock()
}

// Interrupt sends SIGINT to the process group of every foreground
// command running now, as a terminal's Ctrl-C does, and reports whether
// there was one. A command it killed (status 130) ends its script with
// proto.ErrInterrupted, as bash ends a script whose foreground job died
// of the SIGINT bash got; a command that handled it and exited lets the
// script go on. Background jobs' commands do not get it: bash starts
// them with SIGINT ignored.
func (j *Jailer) Interrupt() bool {
	f := &j.fg
	f.mu.Lock()
	defer f.mu.Unlock()
	for fc := range f.set {
		fc.interrupted.Store(true)
		select {
		case fc.sigs <- syscall.SIGINT:
		default: // three are still on their way: one more adds nothing
		}
	}
	return len(f.set) > 0
}

// interrupted is the outcome of a foreground command: what it returned,
// or proto.ErrInterrupted (which stops the interpreter: no ExitStatus)
// when an interrupt reached it and it died of SIGINT.
func interrupted(fc *fgCommand, err error) error {
	if fc == nil || !fc.interrupted.Load() {
		return err
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok && int(es) == proto.SignalStatus(syscall.SIGINT) {
		return proto.ErrInterrupted
	}
	return err
}
