//go:build linux && cgo

package confine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"

	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
	"wsh/internal/job"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A runState is one Run of a script through an interpreter of this
// Jailer's: a command refused under WSH_REQUIRE_SANDBOX ends it.
type runState struct {
	failedClosed atomic.Bool
	// interrupted: a foreground command died of an interrupt; the Run
	// ends, in every interpreter of it (a subshell's, a command
	// substitution's), as bash's script does.
	interrupted atomic.Bool
	// ranCommand: an external command ran (watch.NoteConfigsAtEnd).
	ranCommand atomic.Bool
}

type runKey struct{}

// errFailedClosed is the error a refused command, or an access of the
// shell's with no jail to do it in, stops its interpreter with (not an
// interp.ExitStatus, which would let the script go on); StartRun's end
// turns it into the status. Where it is printed (a command substitution's
// end), wsh has said why already.
var errFailedClosed = errors.New("the script stops (wsh said why above)")

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
		j.sinceRunEnd.Store(false)
		j.endChecks(rs.ranCommand.Load())
		if rs.failedClosed.Load() {
			return interp.ExitStatus(126)
		}
		if rs.interrupted.Load() {
			return proto.ErrInterrupted
		}
		return err
	}
}

// endChecks are a Run's last checks: what the shell's redirections wrote,
// the git configs the last command made (when a command ran), what was
// written through a path bound read-only.
func (j *Jailer) endChecks(ranCommand bool) {
	j.watch.CheckShellWrites()
	if ranCommand && !j.cfg.NoSandbox && j.rung == degrade.RungFull {
		j.watch.NoteConfigsAtEnd(func() (protect.Protection, error) {
			return j.protector.Protection(j.filesDir(), false)
		})
	}
	j.watch.CheckBound()
}

// EndChecks are a Run's last checks (endChecks) for package wrap, whose
// caller's interpreter has no Run of wsh's: at the Wrapper's Close, of
// the commands run since the last Run's end (all, with no Run of wsh's;
// a background job's, after one), if any. What changed after that, the
// host's doing, is not said.
func (j *Jailer) EndChecks() {
	if j.sinceRunEnd.Swap(false) {
		j.endChecks(true)
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

// stopped is the call and open handlers' check: a Run that failed
// closed, or was interrupted, runs nothing more.
func stopped(ctx context.Context) error {
	rs, ok := ctx.Value(runKey{}).(*runState)
	switch {
	case !ok:
	case rs.failedClosed.Load():
		return errFailedClosed
	case rs.interrupted.Load():
		return proto.ErrInterrupted
	}
	return nil
}

// A running is an external command while it runs: what an interrupt
// (its job is the foreground, "") or kill %N (its job's id) reaches.
type running struct {
	job         string
	sigs        chan syscall.Signal
	interrupted atomic.Bool
}

// send passes sig on to the command, unless three are still on their
// way, when one more adds nothing.
func (rc *running) send(sig syscall.Signal) {
	select {
	case rc.sigs <- sig:
	default:
	}
}

// runningSet are the external commands running.
type runningSet struct {
	mu  sync.Mutex
	set map[*running]struct{}
	fg  int // how many of them are of the foreground
	// starts counts the commands started, ever: with the size of set,
	// it tells whether a command ran alone from its start to its end.
	starts uint64
}

// sample is the count of commands started and of those running now.
func (f *runningSet) sample() (starts uint64, running int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, len(f.set)
}

// start registers c's command as running.
func (f *runningSet) start(c *command) *running {
	rc := &running{job: job.Of(c.hc.Env), sigs: make(chan syscall.Signal, 4)}
	f.mu.Lock()
	if f.set == nil {
		f.set = map[*running]struct{}{}
	}
	f.set[rc] = struct{}{}
	f.starts++
	if rc.job == "" {
		f.fg++
	}
	f.mu.Unlock()
	return rc
}

// end notes that rc's command ended, and says whether no foreground
// command is left running.
func (f *runningSet) end(rc *running) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.set, rc)
	if rc.job == "" {
		f.fg--
	}
	return f.fg == 0
}

// signal sends sig to every command of job id ("": the foreground), and
// says how many there were.
func (f *runningSet) signal(id string, sig syscall.Signal, mark bool) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for rc := range f.set {
		if rc.job == id {
			if mark {
				rc.interrupted.Store(true)
			}
			rc.send(sig)
			n++
		}
	}
	return n
}

// Interrupt sends SIGINT to the process group of every foreground
// command running now, as a terminal's Ctrl-C does, and reports whether
// there was one. A command it killed (status 130) ends its script with
// proto.ErrInterrupted, as bash ends a script whose foreground job died
// of the SIGINT bash got; a command that handled it and exited lets the
// script go on. Background jobs' commands do not get it: bash starts
// them with SIGINT ignored.
func (j *Jailer) Interrupt() bool {
	return j.running.signal("", syscall.SIGINT, true) > 0
}

// interrupted is the outcome of a foreground command: what it returned,
// or, when an interrupt reached it and it died of SIGINT, the end of the
// Run (StartRun's end gives proto.ErrInterrupted).
//
// A command's status does not say whether it died of SIGINT or exited
// with 130 (the jail's init passes the number on): one that handled the
// interrupt and exited 130 ends the script too, where bash's goes on.
func interrupted(ctx context.Context, rc *running, err error) error {
	if !rc.interrupted.Load() {
		return err
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok && int(es) == proto.SignalStatus(syscall.SIGINT) {
		rs, ok := ctx.Value(runKey{}).(*runState)
		if !ok {
			return proto.ErrInterrupted
		}
		rs.interrupted.Store(true)
		// The shell exits with 130 ($? is 130 after it, in an
		// interactive wsh); the Run's other interpreters stop at their
		// next command (stopped).
		return interp.HandlerCtx(ctx).Builtin(ctx, []string{"exit", "130"})
	}
	return err
}
