//go:build linux && cgo

package confine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync/atomic"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
	"wsh/internal/builtins"
)

// Middleware is package wrap's exec middleware, for an interpreter of the
// caller's own: every command that reaches it runs in the jail, as
// wsh's own interpreter runs an external command (external), and next is
// called only where no confinement is in force: opted out
// (WSH_NO_SANDBOX), or stepped down to the bottom of the ladder (after
// the one warning). A command refused under WSH_REQUIRE_SANDBOX, or that
// the jail's file server could not look up, ends the script with status
// 126 (the exit builtin), and next is not called. wsh's own builtins
// (jobs, kill %N, wait, umask) are not in it: they are package shell's.
func (j *Jailer) Middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return j.middlewareOf(nil, next)
}

// middlewareOf is Middleware, with the state of the interpreter whose
// RunnerOptions made it (nil for Middleware alone): the lookups its call
// handler renamed run here, and a call handler or environment of the
// caller's put in place of wsh's stops the script.
func (j *Jailer) middlewareOf(st *wrapRun, next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if st != nil {
			if err := st.misused(true); err != nil {
				return err
			}
		}
		var err error
		switch {
		case st != nil && builtins.Renamed(args):
			err, _ = j.builtins.Run(ctx, args) // a lookup the call handler renamed
		case j.unconfined():
			if !j.cfg.NoSandbox {
				j.warnOnce()
			}
			return next(ctx, args)
		default:
			err = j.external(context.WithValue(ctx, nextKey{}, next), args)
		}
		if errors.Is(err, errFailedClosed) {
			// No Run of wsh's to end (StartRun): the script ends here,
			// as bash's does at exit 126.
			return interp.HandlerCtx(ctx).Builtin(ctx, []string{"exit", "126"})
		}
		return err
	}
}

// A wrapRun is what wsh keeps of an interpreter of the caller's own that
// RunnerOptions made wsh's: its environment's wrap, whether wsh's call
// handler is the one that runs, and whether a file access of the shell's
// failed closed (which ends the script at its next command).
type wrapRun struct {
	fifo    *fifoEnviron
	calls   atomic.Bool
	stopped atomic.Bool
}

// misused says, as the error that stops the script, that an option of
// the caller's given after RunnerOptions replaced wsh's environment (so
// mvdan.cc/sh would make and open its FIFOs in a TMPDIR commands can
// write) or, from the exec handler (exec), wsh's call handler.
func (st *wrapRun) misused(exec bool) error {
	switch {
	case st.fifo != nil && !st.fifo.taken.Load():
		return errors.New("wsh: the interpreter's environment was set after wrap's RunnerOptions (give interp.Env before them): the script stops")
	case exec && !st.calls.Load():
		return errors.New("wsh: the interpreter's call handler was set after wrap's RunnerOptions (give yours with wrap.CallHandler): the script stops")
	}
	return nil
}

// stopOn is err, from a stat, read-dir or access of the shell's, which
// mvdan.cc/sh takes for an answer (a test false, a glob unmatched): one
// that failed closed ends the script at its next command (the call
// handler). Where it was the script's last, the next Run of the
// interpreter ends at its first.
func (st *wrapRun) stopOn(err error) error {
	if errors.Is(err, errFailedClosed) {
		st.stopped.Store(true)
	}
	return err
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
// wsh's: the shell's own file access (open, stat, read-dir, access) done
// in the jail, its environment seen through the jail (~user from the
// jail's user database; mvdan.cc/sh's own FIFOs in wsh's directory), a
// call handler (own, if not nil, then wsh's lookups done in the jail:
// type and command -v of a path, source's PATH search, pwd -P) and the
// exec middleware (Middleware). They go after the caller's interp.Env,
// which they wrap, and the caller's exec middlewares that are to come
// before wsh's.
func (j *Jailer) RunnerOptions(own interp.CallHandlerFunc) []interp.RunnerOption {
	st := &wrapRun{}
	h := j.fileHandlers()
	env := func(r *interp.Runner) error {
		env := r.Env
		if env == nil {
			env = expand.ListEnviron(os.Environ()...) // mvdan.cc/sh's default
		}
		if !j.cfg.NoSandbox {
			env = userDBEnviron{env, j}
		}
		if j.fifoDir != "" {
			st.fifo = &fifoEnviron{Environ: env, dir: j.fifoDir}
			env = st.fifo
		}
		r.Env = env
		return nil
	}
	call := func(ctx context.Context, args []string) ([]string, error) {
		st.calls.Store(true)
		if err := st.misused(false); err != nil {
			return nil, err
		}
		if st.stopped.CompareAndSwap(true, false) {
			return nil, errFailedClosed // wsh said why
		}
		if own != nil {
			var err error
			if args, err = own(ctx, args); err != nil || len(args) == 0 {
				return args, err
			}
		}
		if renamed, ok := builtins.RenameLookup(args, j.refusedFiles()); ok {
			return renamed, nil
		}
		return args, nil
	}
	return []interp.RunnerOption{
		env,
		interp.OpenHandler(h.open), // failing closed, it stops the script itself
		interp.StatHandler(func(ctx context.Context, path string, follow bool) (fs.FileInfo, error) {
			fi, err := h.stat(ctx, path, follow)
			return fi, st.stopOn(err)
		}),
		interp.ReadDirHandler2(func(ctx context.Context, path string) ([]fs.DirEntry, error) {
			es, err := h.readDir(ctx, path)
			return es, st.stopOn(err)
		}),
		interp.AccessHandler(func(ctx context.Context, path string, mode interp.AccessMode) error {
			return st.stopOn(h.access(ctx, path, mode))
		}),
		interp.CallHandler(call),
		interp.ExecHandlers(func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc { return j.middlewareOf(st, next) }),
	}
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
