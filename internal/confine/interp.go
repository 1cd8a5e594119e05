//go:build linux && cgo

package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/internal/job"
	"wsh/internal/proto"
	"wsh/internal/shellfs"
	"wsh/internal/streams"
	"wsh/internal/umask"
)

// NewInterp makes an interp.Runner whose commands go through this Jailer:
// RunnerOptions, plus the interpreter's own temporary directory set to
// wsh's. environ is its environment; params, if any, are applied as `set`
// would (-e, -o pipefail, --, args).
//
// mvdan.cc/sh opens "$TMPDIR/sh-interp-*" itself, without the open handler
// and following symlinks, so a command that put a symlink by that name in
// $TMPDIR would turn a redirection into a write anywhere. The interpreter
// therefore uses a directory of wsh's own for its FIFOs, read-only in the
// jail; the script and its commands still see the TMPDIR they were given.
func (j *Jailer) NewInterp(environ []string, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	return j.newInterp(environ, nil, params, opts...)
}

// privatePrefix starts the names of the shell variables wsh keeps for
// itself (the umask, the jobs): none comes from the environment a Runner
// is given, and none goes to a command's (execEnv).
const privatePrefix = "__wsh_"

// newInterp is NewInterp, with own set after the environment's
// variables of wsh's are dropped (a script without #! that a background
// job runs is that job's).
func (j *Jailer) newInterp(environ, own []string, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	environ = slices.DeleteFunc(slices.Clone(environ), func(kv string) bool { return strings.HasPrefix(kv, privatePrefix) })
	var env expand.Environ = expand.ListEnviron(append(environ, own...)...)
	if !j.cfg.NoSandbox {
		env = userDBEnviron{env, j}
	}
	var fifo *fifoEnviron
	if j.fifoDir != "" {
		fifo = &fifoEnviron{Environ: env, dir: j.fifoDir}
		env = fifo
	}
	// opts are wsh's own (package shell gives no way to pass the
	// interpreter's options through): the streams, the directory. The policy's handlers come before them and
	// the exec middleware, terminal, after.
	all := append([]interp.RunnerOption{interp.Env(env)}, j.fileOptions()...)
	all = append(all, opts...)
	all = append(all, interp.CallHandler(j.call))
	all = append(all, interp.ExecHandlers(j.middleware()))
	r, err := interp.New(all...)
	if err != nil {
		return nil, err
	}
	if fifo != nil {
		if r.Reset(); !fifo.taken.Load() {
			return nil, errors.New("confine: NewInterp: pass the environment as environ, not as an interp.Env option")
		}
	}
	if params != nil {
		if err := interp.Params(params...)(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// fifoEnviron is the interpreter's environment: TMPDIR is the FIFO
// directory at its first read, which is the interpreter's Reset taking
// its temporary directory (taken), and the commands' own after.
type fifoEnviron struct {
	expand.Environ
	dir   string
	taken atomic.Bool
}

func (e *fifoEnviron) Get(name string) expand.Variable {
	if name == "TMPDIR" && e.taken.CompareAndSwap(false, true) {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.dir}
	}
	return e.Environ.Get(name)
}

// Close removes what the Jailer made on the host (its FIFO directory).
// It does so once; a later Close returns what the first returned.
func (j *Jailer) Close() error {
	j.closeOnce.Do(func() { j.closeErr = j.close() })
	return j.closeErr
}

func (j *Jailer) close() error {
	if j.terminals.Any() {
		// A command still running (a background job, cancelled as the
		// run ended) could change the settings after they are put back.
		j.watch.Wait(j.KillTimeout + time.Second)
	}
	j.watch.CheckAll()
	var err error
	j.sessions.Closing()
	j.files.Close()
	err = j.sessions.Close()
	// What a command left connected ends with the proxy (the session's
	// processes are gone by now).
	if perr := j.net.Close(); err == nil {
		err = perr
	}
	// The placeholders wsh made go, once no jail binds them: a command
	// still running (its jail's end is being waited for) keeps them, for
	// the next run to remove.
	j.watch.Wait(j.KillTimeout + time.Second)
	// No write of the shell's is between its protection and its open
	// (its server is gone: none starts after this).
	j.writeMu.Lock()
	inUse := j.watch.Running()
	if j.protector != nil {
		j.protector.End(inUse)
	}
	j.terminals.Restore()
	j.given.Restore()
	j.home.Release()
	if j.fifoDir == "" || j.fifoDir == noFifoDir {
		return err
	}
	os.Chmod(j.fifoDir, 0o700) // listable again, to be emptied (makeFifoDir)
	if rerr := os.RemoveAll(j.fifoDir); err == nil {
		err = rerr
	}
	return err
}

// makeFifoDir makes the interpreter's temporary directory in the host's
// /dev/shm. Every jail has a /dev/shm of its own, so no jailed command, of
// this session or another, can write there; this session's jails get the
// directory bound read-only at the same path, to open the FIFOs of process
// substitution.
//
// Its name says whose it is: wsh-run-PID-START-, PID and START (its start
// time, in clock ticks since boot) those of the process that made it. A
// wsh killed with SIGKILL cannot remove its own; the next wsh of the same
// user removes every one whose process is gone (sweepFifoDirs).
func makeFifoDir() (proto.PathID, error) {
	sweepFifoDirs()
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return proto.PathID{}, fmt.Errorf("the interpreter's directory for FIFOs: %w", err)
	}
	dir, err := os.MkdirTemp("/dev/shm", fmt.Sprintf("%s%d-%d-", fifoPrefix, pid, start))
	if err != nil {
		return proto.PathID{}, fmt.Errorf("the interpreter's directory for FIFOs in /dev/shm: %w", err)
	}
	// Not listable (-wx): the interpreter makes and opens its FIFOs by
	// their names, which are random; a command, of this uid, cannot list
	// the directory to open another's FIFO (a process substitution's
	// output), nor change its mode (bound read-only in the jail).
	if err := os.Chmod(dir, 0o300); err != nil {
		os.Remove(dir)
		return proto.PathID{}, fmt.Errorf("the interpreter's directory for FIFOs in /dev/shm: %w", err)
	}
	id, err := proto.NewPathID(dir)
	if err != nil {
		os.Remove(dir)
	}
	return id, err
}

const fifoPrefix = "wsh-run-"

// noFifoDir is the interpreter's temporary directory where /dev/shm is
// refused: no process can make it (or anything in /proc), so the
// interpreter can make no FIFO there, and opens nothing there itself.
const noFifoDir = "/proc/wsh-no-fifo-directory"

// sweepFifoDirs removes the FIFO directories of this user's wsh processes
// that are gone: a directory of /dev/shm named by makeFifoDir, owned by
// this uid, whose process is not running (or another process has its pid
// now: the start time differs).
func sweepFifoDirs() {
	ents, err := os.ReadDir("/dev/shm")
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), fifoPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		f := strings.SplitN(rest, "-", 3)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		start, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 {
			continue
		}
		path := filepath.Join("/dev/shm", e.Name())
		var st unix.Stat_t
		if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
			continue
		}
		if now, err := startTime(pid); err == nil && now == start {
			continue // its wsh still runs
		}
		os.Chmod(path, 0o700)
		os.RemoveAll(path)
	}
}

// startTime is the start time of process pid, in clock ticks since boot
// (proc(5), /proc/PID/stat field 22).
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// userDBEnviron is the interpreter's environment, which mvdan.cc/sh also
// asks for "HOME NAME" to expand ~NAME before it reads the user database
// itself (os/user, in wsh's own process). Where the shell's file access is
// done in the jail, ~NAME is the home the jail's /etc/passwd gives NAME,
// and stays as written where it gives none (unreadable, hidden, or no such
// user), as bash leaves ~NAME of a user that does not exist.
type userDBEnviron struct {
	expand.Environ
	j *Jailer
}

// userDB is the file the user database is read from (wsh is built with
// osusergo).
const userDB = "/etc/passwd"

func (e userDBEnviron) Get(name string) expand.Variable {
	user, ok := strings.CutPrefix(name, "HOME ")
	if !ok || !e.j.jailedFiles() && !e.j.refusedFiles() {
		return e.Environ.Get(name)
	}
	home := "~" + user
	if h, ok := e.j.homeOf(user); ok {
		home = h
	}
	return expand.Variable{Set: true, Kind: expand.String, Str: home}
}

// homeOf is user's home, as the jail's user database gives it.
func (j *Jailer) homeOf(user string) (string, bool) {
	if user == "" || strings.ContainsAny(user, ":\n") {
		return "", false
	}
	f, err := j.files.OpenIn(context.Background(), userDB, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 7 && f[0] == user {
			return f[5], true
		}
	}
	return "", false
}

// call is the interpreter's call handler, for every simple command: a
// Run that failed closed or was interrupted (StartRun) runs nothing
// more; eval'd code that starts jobs is marked (markEval); the caller's
// handler, if any, comes next (not for job.Mark's own calls); and a call
// of one of wsh's builtins is renamed to reach the exec handler
// (builtins.Set.Rename).
func (j *Jailer) call(ctx context.Context, args []string) ([]string, error) {
	if err := stopped(ctx); err != nil {
		return nil, err
	}
	hc := interp.HandlerCtx(ctx)
	if args[0] == "eval" || len(args) > 1 && (args[0] == "builtin" || args[0] == "command") && args[1] == "eval" {
		args = markEval(args)
	}
	if j.CallHandler != nil && !job.Internal(args) {
		var err error
		if args, err = j.CallHandler(ctx, args); err != nil {
			return nil, err
		}
	}
	return j.builtins.Rename(hc, args), nil
}

// openCreate opens a redirection's file that may be made: one it makes
// has bash's mode, 0666, less the script's umask (mvdan.cc/sh asks for
// 0644). The process's umask is not changed for it: an open can wait (a
// FIFO's, for its reader) for ever, and another shell's commands must not
// start with this shell's mask meanwhile. The file is made with O_EXCL
// under umask.Hold, so that the process's own umask is in force (no fork of
// another shell's has it changed), and given the script's mode after; a
// file that exists is opened as it is, without the lock.
func openCreate(ctx context.Context, open interp.OpenHandlerFunc, path string, flag int) (io.ReadWriteCloser, error) {
	var f io.ReadWriteCloser
	var err error
	umask.Hold(func() { f, err = open(ctx, path, flag|os.O_EXCL, 0o666) })
	if err == nil {
		if m, ok := umask.Script(interp.HandlerCtx(ctx)); ok {
			if ch, ok := f.(interface{ Chmod(os.FileMode) error }); ok {
				ch.Chmod(os.FileMode(0o666 &^ m))
			}
		}
		return f, nil
	}
	if flag&os.O_EXCL != 0 || !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.EEXIST) {
		return nil, err
	}
	return open(ctx, path, flag, 0o666)
}

// markEval is an eval whose code starts background jobs with those jobs
// marked (job.Mark), as the script's own are: its code, parsed and
// printed again. Code that does not parse, or starts no job, is left as
// it is.
func markEval(args []string) []string {
	i := slices.Index(args, "eval")
	src := strings.Join(args[i+1:], " ")
	if !strings.Contains(src, "&") {
		return args
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil || !job.HasJobs(f) {
		return args
	}
	job.Mark(f)
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return args
	}
	return append(slices.Clone(args[:i+1]), b.String())
}

// fileOptions are the interpreter's handlers for redirections, source,
// globbing, cd and test: done in the jail where it has a file policy
// (jailedFiles), else on the host; a file a redirection makes has the
// script's umask in either case.
func (j *Jailer) fileOptions() []interp.RunnerOption {
	h := j.fileHandlers()
	return []interp.RunnerOption{interp.OpenHandler(h.open), interp.StatHandler(h.stat), interp.ReadDirHandler2(h.readDir), interp.AccessHandler(h.access)}
}

// handlers are the interpreter's file handlers (fileOptions).
type handlers struct {
	open    interp.OpenHandlerFunc
	stat    interp.StatHandlerFunc
	readDir interp.ReadDirHandlerFunc2
	access  interp.AccessHandlerFunc
}

func (j *Jailer) fileHandlers() handlers {
	hostOpen := interp.DefaultOpenHandler()
	hostStat := interp.DefaultStatHandler()
	hostReadDir := interp.DefaultReadDirHandler2()
	hostAccess := interp.DefaultAccessHandler()
	return handlers{
		open: func(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			// A Run that failed closed opens nothing more: a
			// redirection comes before its command's call handler.
			if err := stopped(ctx); err != nil {
				return nil, err
			}
			_, stream := streams.StdioFD(shellfs.Absolute(ctx, path))
			switch {
			case j.refusedFiles() && !stream:
				return nil, j.files.Refuse(ctx, path)
			case j.jailedFiles() || j.refusedFiles():
				// The shell's own streams and the devices stay in wsh
				// (a write to a stream that is a file is the jail's).
				return j.files.Open(ctx, path, flag, perm)
			case flag&os.O_CREATE == 0:
				return hostOpen(ctx, path, flag, perm)
			}
			return openCreate(ctx, hostOpen, path, flag)
		},
		stat: func(ctx context.Context, path string, follow bool) (fs.FileInfo, error) {
			if j.refusedFiles() {
				return nil, j.files.Refuse(ctx, path)
			}
			if j.jailedFiles() {
				return j.files.Stat(ctx, path, follow)
			}
			return hostStat(ctx, path, follow)
		},
		readDir: func(ctx context.Context, path string) ([]fs.DirEntry, error) {
			if j.refusedFiles() {
				return nil, j.files.Refuse(ctx, path)
			}
			if j.jailedFiles() {
				return j.files.ReadDir(ctx, path)
			}
			return hostReadDir(ctx, path)
		},
		access: func(ctx context.Context, path string, mode interp.AccessMode) error {
			if j.refusedFiles() {
				return j.files.Refuse(ctx, path)
			}
			if j.jailedFiles() {
				return j.files.Access(ctx, path, mode)
			}
			return hostAccess(ctx, path, mode)
		},
	}
}

// middleware is wsh's exec middleware. It is terminal: it runs every
// command itself and never calls next, because mvdan's default handler
// stops the whole script on some exec failures.
func (j *Jailer) middleware() func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return j.exec }
}
