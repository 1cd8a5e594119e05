//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"sync/atomic"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
)

// Middleware is package wrap's exec middleware, for an interpreter of the
// caller's own: every command that reaches it runs in the jail, as
// wsh's own interpreter runs an external command (external), and next is
// called only where no confinement is in force: opted out
// (WSH_NO_SANDBOX), or stepped down to the bottom of the ladder (after
// the one warning). A command refused under WSH_REQUIRE_SANDBOX gets 126,
// and next is not called. wsh's own builtins (jobs, kill %N, wait) are
// not in it: they are package shell's.
func (j *Jailer) Middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if j.unconfined() {
			if !j.cfg.NoSandbox {
				j.warnOnce()
			}
			return next(ctx, args)
		}
		err := j.external(context.WithValue(ctx, nextKey{}, next), args)
		if errors.Is(err, errFailedClosed) {
			// No Run of wsh's to end (StartRun): the command fails
			// closed, and so does every later one.
			return interp.ExitStatus(126)
		}
		return err
	}
}

// nextKey holds, in a command's context, the caller's next exec handler
// (Middleware), which runs it where no confinement is in force.
type nextKey struct{}

// unconfined says whether commands run with no confinement of wsh's:
// opted out, or on the bottom rung with nothing refusing it.
func (j *Jailer) unconfined() bool {
	if j.cfg.NoSandbox {
		return true
	}
	if _, degraded := j.state.Degraded(); !degraded || j.rung != degrade.RungNone {
		return false
	}
	_, below := j.belowFloor()
	return !below
}

// RunnerOptions are what an interpreter of the caller's own needs to be
// wsh's, but the exec middleware (Middleware): the shell's own file
// access (open, stat, read-dir, access) done in the jail, and its
// environment seen through the jail (~user from the jail's user
// database; mvdan.cc/sh's own FIFOs in wsh's directory). They go after
// the caller's interp.Env, which they wrap.
func (j *Jailer) RunnerOptions() []interp.RunnerOption {
	return append(j.fileOptions(), func(r *interp.Runner) error {
		env := r.Env
		if env == nil {
			env = expand.ListEnviron()
		}
		if !j.cfg.NoSandbox {
			env = userDBEnviron{env, j}
		}
		if j.fifoDir != "" {
			env = &firstTmpdir{Environ: env, dir: j.fifoDir}
		}
		r.Env = env
		return nil
	})
}

// firstTmpdir is fifoEnviron for an interpreter wsh did not make: TMPDIR
// is the FIFO directory at its first read, which is the interpreter's
// Reset taking its temporary directory, and the commands' own after.
type firstTmpdir struct {
	expand.Environ
	dir   string
	taken atomic.Bool
}

func (e *firstTmpdir) Get(name string) expand.Variable {
	if name == "TMPDIR" && e.taken.CompareAndSwap(false, true) {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.dir}
	}
	return e.Environ.Get(name)
}

// Status is what is in force for the Jailer's commands.
func (j *Jailer) Status() degrade.Status {
	var st degrade.Status
	refused, isRefused := j.Refused()
	switch v, degraded := j.Degraded(); {
	case j.cfg.NoSandbox:
		st.Mode = degrade.OptedOut
	case isRefused:
		st.Mode, st.Cause = degrade.Refusing, refused.JailError()
	case degraded:
		st.Mode, st.Cause = degrade.Degraded, v.JailError()
	default:
		st.Mode = degrade.Confined
	}
	if v, ok := j.LastFailure(); ok {
		st.LastFailure = v.JailError()
	}
	st.Rung = degrade.RungNone
	if st.Mode != degrade.OptedOut && st.Mode != degrade.Refusing {
		st.Rung = j.Rung()
	}
	return st
}

// OfWrapper is the Jailer of a *wrap.Wrapper (set by package wrap), for
// package shell, which is built on it.
var OfWrapper func(w any) *Jailer
