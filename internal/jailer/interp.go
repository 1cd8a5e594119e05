//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/internal/proto"
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
func (j *Jailer) NewInterp(environ []string, params []string, opts ...interp.RunnerOption) (r *interp.Runner, err error) {
	var env expand.Environ = expand.ListEnviron(environ...)
	if !j.cfg.NoSandbox {
		env = userDBEnviron{env, j.policy.hiddenName}
	}
	var fifo *fifoEnviron
	if j.fifoDir != "" {
		fifo = &fifoEnviron{Environ: env, dir: j.fifoDir}
		env = fifo
	}
	// The policy's handlers come before the caller's options, the exec
	// middleware after them (innermost: an ExecHandlers of the caller's
	// runs first and may call it). Then a probe checks that each of wsh's
	// handlers is the one in force: an option of the caller's that
	// replaced one, or ran the interpreter's Reset (which builds the exec
	// chain once) before wsh's exec middleware was there, is refused.
	probe := &handlerProbe{}
	all := append([]interp.RunnerOption{interp.Env(env)}, j.policyOptions(probe)...)
	all = append(append(all, opts...), interp.ExecHandlers(j.middleware(probe)))
	defer func() {
		// interp.ExecHandler mixed with ExecHandlers panics in Reset.
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("an interpreter option broke the interpreter (%v): interp.ExecHandler replaces wsh's exec middleware; use interp.ExecHandlers, whose middlewares run before wsh's", p)
		}
	}()
	r, err = interp.New(all...)
	if err != nil {
		return nil, err
	}
	if fifo != nil && r.Env != env {
		return nil, errors.New("an interp.Env option would move the interpreter's FIFOs where commands write: give the environment with shell.Env")
	}
	if missing := probe.check(r, !j.cfg.NoSandbox); missing != "" {
		return nil, fmt.Errorf("an interpreter option replaces wsh's %s, which the jail needs: options that replace wsh's handlers, or that run Reset, are refused", missing)
	}
	r.Reset()
	if fifo != nil {
		fifo.taken.Store(true)
	}
	if params != nil {
		if err := interp.Params(params...)(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// A handlerProbe checks that the handlers in force in an interpreter are
// wsh's: while it is on, wsh's handlers note that they were called and
// do nothing else.
type handlerProbe struct {
	on  atomic.Bool
	hit [probeCount]atomic.Bool
}

const (
	probeOpen = iota
	probeStat
	probeReadDir
	probeAccess
	probeExec
	probeCount
)

var probeNames = [probeCount]string{"interp.OpenHandler", "interp.StatHandler", "interp.ReadDirHandler2", "interp.AccessHandler", "exec middleware (an interp.ExecHandlers middleware must call next)"}

// probeScript reaches each handler once: a redirection, test -e, a glob,
// test -r and an external command. It prints nothing: the probe's
// handlers neither fail nor write. Opted out, when the policy's handlers
// are mvdan's own, only the external command is run.
const (
	probeScript     = ": </wsh-probe; [ -e /wsh-probe ]; : /wsh-probe-*; [ -r /wsh-probe ]; " + probeExecScript
	probeExecScript = "wsh-probe-exec"
)

// taken reports whether the probe is on, noting that handler h was
// reached.
func (p *handlerProbe) taken(h int) bool {
	if p == nil || !p.on.Load() {
		return false
	}
	p.hit[h].Store(true)
	return true
}

// check runs the probe script in r and names the first of wsh's handlers
// that it did not reach, or returns "". policy says whether the policy's
// handlers are installed (not when opted out).
func (p *handlerProbe) check(r *interp.Runner, policy bool) string {
	script := probeExecScript
	if policy {
		script = probeScript
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		panic(err)
	}
	p.on.Store(true)
	r.Run(context.Background(), file)
	p.on.Store(false)
	for h := range probeCount {
		if (policy || h == probeExec) && !p.hit[h].Load() {
			return probeNames[h]
		}
	}
	return ""
}

// fifoEnviron is the interpreter's environment: TMPDIR is the FIFO
// directory until the interpreter took it as its temporary directory
// (taken), and the commands' own after.
type fifoEnviron struct {
	expand.Environ
	dir   string
	taken atomic.Bool
}

func (e *fifoEnviron) Get(name string) expand.Variable {
	if name == "TMPDIR" && !e.taken.Load() {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.dir}
	}
	return e.Environ.Get(name)
}

// Close removes what the Jailer made on the host (its FIFO directory).
func (j *Jailer) Close() error {
	if j.terminals.any() {
		// A command still running (a background job, cancelled as the
		// run ended) could change the settings after they are put back.
		j.waitCommands(j.KillTimeout + time.Second)
	}
	j.checkWatched()
	j.terminals.restore()
	j.releaseHome()
	if j.fifoDir == "" {
		return nil
	}
	return os.RemoveAll(j.fifoDir)
}

// makeFifoDir makes the interpreter's temporary directory in the host's
// /dev/shm. Every jail has a /dev/shm of its own, so no jailed command, of
// this session or another, can write there; this session's jails get the
// directory bound read-only at the same path, to open the FIFOs of process
// substitution.
func makeFifoDir() (proto.PathID, error) {
	dir, err := os.MkdirTemp("/dev/shm", "wsh-")
	if err != nil {
		return proto.PathID{}, fmt.Errorf("the interpreter's directory for FIFOs in /dev/shm: %w", err)
	}
	id, err := proto.NewPathID(dir)
	if err != nil {
		os.Remove(dir)
	}
	return id, err
}

// userDBEnviron is the interpreter's environment, which mvdan.cc/sh also
// asks for "HOME NAME" to expand ~NAME before it reads the user database
// itself (os/user, which reads /etc/passwd in wsh's own process). When
// /etc/passwd is hidden, ~NAME stays as written, as for a user that does
// not exist.
type userDBEnviron struct {
	expand.Environ
	hidden func(string) bool
}

// userDB is the file os/user reads (wsh is built with osusergo).
const userDB = "/etc/passwd"

func (e userDBEnviron) Get(name string) expand.Variable {
	if user, ok := strings.CutPrefix(name, "HOME "); ok && e.hidden(userDB) {
		return expand.Variable{Set: true, Kind: expand.String, Str: "~" + user}
	}
	return e.Environ.Get(name)
}

func lookupEnvOK(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func withoutEnv(environ []string, key string) []string {
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}

// policyOptions are the in-process policy's handlers for redirections,
// source, globbing, cd and test (see policy), unless WSH_NO_SANDBOX opts
// out; probe, while on, stands in for them (NewInterp).
func (j *Jailer) policyOptions(probe *handlerProbe) []interp.RunnerOption {
	if j.cfg.NoSandbox {
		return nil
	}
	p := &j.policy
	return []interp.RunnerOption{
		interp.OpenHandler(func(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
			if probe.taken(probeOpen) {
				return nopFile{}, nil
			}
			return p.open(ctx, name, flag, perm)
		}),
		interp.StatHandler(func(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
			if probe.taken(probeStat) {
				return nil, fs.ErrNotExist
			}
			return p.stat(ctx, name, follow)
		}),
		interp.ReadDirHandler2(func(ctx context.Context, path string) ([]fs.DirEntry, error) {
			if probe.taken(probeReadDir) {
				return nil, nil
			}
			return p.readDir(ctx, path)
		}),
		interp.AccessHandler(func(ctx context.Context, path string, mode interp.AccessMode) error {
			if probe.taken(probeAccess) {
				return fs.ErrNotExist
			}
			return p.access(ctx, path, mode)
		}),
	}
}

// nopFile is what the probe's open handler opens.
type nopFile struct{}

func (nopFile) Read([]byte) (int, error) { return 0, io.EOF }

func (nopFile) Write(b []byte) (int, error) { return len(b), nil }

func (nopFile) Close() error { return nil }

// middleware is wsh's exec middleware. It is terminal: it runs every
// command itself and never calls next, because mvdan's default handler
// stops the whole script on some exec failures.
func (j *Jailer) middleware(probe *handlerProbe) func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			if probe.taken(probeExec) {
				return nil
			}
			return j.exec(ctx, args)
		}
	}
}
