//go:build linux && cgo

package jailer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/internal/initproc"
	"wsh/internal/launch"
	"wsh/internal/proto"
	"wsh/internal/seccomp"
	"wsh/internal/verdict"
)

// DefaultKillTimeout is how long a cancelled command has between SIGTERM and
// SIGKILL.
const DefaultKillTimeout = 2 * time.Second

// A Jailer runs external commands for an interp.Runner: in the jail, or
// unsandboxed when opted out or after the host refused the jail. One Jailer
// holds the degrade state of one Runner.
type Jailer struct {
	cfg      config.Config
	writable []string
	policy   policy
	fifoDir  string       // the interpreter's own temporary directory
	filter   []byte       // the seccomp program, compiled once
	shmDir   proto.PathID // fifoDir, bound read-only in the jail
	warn     io.Writer
	state    verdict.State
	home     jailHome
	// protector says which paths beneath the writable ones are read-only.
	protector *protector
	// startNote is said once, with the first command, when the start
	// directory is not writable.
	startNote   string
	startIsHome bool
	startOnce   sync.Once
	madeSaid    sync.Map // protected paths a command made, said once each
	watchMu     sync.Mutex
	watching    map[*protection]bool // the protection of each command running
	terminals   terminals            // put back as they were when the Runner closes
	// KillTimeout is the time between SIGTERM and SIGKILL on cancellation.
	KillTimeout time.Duration
	// WarnGate, if set, is asked before the one warning of a degraded
	// Jailer is printed (the Jailer says it once in any case): false
	// leaves it unsaid, as when it was said once for the whole process.
	WarnGate func() bool
	// startFailure is the verdict of the jail made when the Jailer was,
	// when it failed for another reason than a refusal.
	startFailure *verdict.Verdict
}

// StartFailure returns the verdict of the jail NewJailer made, when it
// could not be made for a reason other than the host refusing it: no
// command would get a jail.
func (j *Jailer) StartFailure() (verdict.Verdict, bool) {
	if j.startFailure == nil {
		return verdict.Verdict{}, false
	}
	return *j.startFailure, true
}

// LastFailure returns the verdict of the last command whose jail could
// not be made for a reason other than the host refusing it.
func (j *Jailer) LastFailure() (verdict.Verdict, bool) { return j.state.Failed() }

// Refused returns, with RequireSandbox, the last refusal of the jail by
// the host: commands fail closed.
func (j *Jailer) Refused() (verdict.Verdict, bool) { return j.state.Refused() }

// Config returns the Jailer's configuration.
func (j *Jailer) Config() config.Config { return j.cfg }

// NewJailer makes a Jailer. dir is the working directory the Runner starts
// in, which is writable in the jail along with /tmp, $TMPDIR (from environ,
// when it exists) and cfg.Writable. The one warning goes to warn.
func NewJailer(cfg config.Config, dir string, environ []string, warn io.Writer) (*Jailer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if warn == nil {
		warn = io.Discard
	}
	if !cfg.NoSandbox && !initproc.Initialized() {
		// Re-executed as a jail's init, this program would run its own
		// main again, in the jail, and no command would ever run.
		return nil, proto.ErrNoInit
	}
	w, startWhy, err := writableAndWhy(cfg, dir, environ)
	if err != nil {
		return nil, err
	}
	j := &Jailer{cfg: cfg, writable: w, warn: warn, KillTimeout: DefaultKillTimeout}
	j.state.RequireSandbox = cfg.RequireSandbox
	projects := append([]string(nil), cfg.Writable...)
	if startWhy == "" {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			projects = append(projects, d) // the start directory
		}
	}
	j.protector = newProtector(w, projects, cfg.Protect, environ)
	if startWhy != "" && !cfg.NoSandbox {
		j.startNote = "wsh: the start directory is not writable in the jail: " + startWhy +
			"; name it in WSH_WRITABLE to write to it"
		j.startIsHome = strings.HasSuffix(startWhy, " is the home directory")
	}
	var plan launch.HomePlan
	var why string
	var failed bool
	hidden := cfg.Hide
	if !cfg.NoSandbox {
		// wsh's state directory (the copy-on-write home's layers) is
		// hidden from every jail and from the shell itself.
		plan, why, failed = planHome(cfg, environ, w)
		if why == "" {
			if plan, err = makeState(plan, w); err != nil {
				why, failed = err.Error(), true
			}
		}
		hidden = append(append([]string(nil), hidden...), existingStates(plan)...)
	}
	if j.policy, err = newPolicy(w, hidden); err != nil {
		return nil, err
	}
	j.policy.protector = j.protector
	if !cfg.NoSandbox {
		if d, err := filepath.EvalSymlinks(dir); err == nil && j.policy.hiddenName(d) {
			// The jail would cover it: no command could start there.
			return nil, &config.Error{Var: "the working directory", Err: fmt.Errorf("%s is hidden (WSH_HIDE, or wsh's state directory): start wsh elsewhere", d)}
		}
		launch.PrepareSelfCopy()
		id, err := makeFifoDir()
		if err != nil {
			return nil, err
		}
		j.fifoDir, j.shmDir = id.Path, id
		if err := j.compileFilter(); err != nil {
			j.Close()
			return nil, err
		}
		j.setupHome(plan, why, failed)
		j.decide(dir)
	}
	return j, nil
}

// compileFilter compiles the seccomp program that every jail init of this
// Jailer loads; the init has no compiler of its own.
func (j *Jailer) compileFilter() error {
	spec := proto.Spec{AllowUnix: j.allowUnix()}
	f, err := seccomp.CompileFilter(spec.SkipGroups()...)
	if err != nil {
		return err
	}
	j.filter = f
	return nil
}

func writablePaths(cfg config.Config, dir string, environ []string) ([]string, error) {
	w, _, err := writableAndWhy(cfg, dir, environ)
	return w, err
}

// writableAndWhy returns the writable paths, and, when the start directory
// is not one of them, why. The start directory, $TMPDIR and /tmp are
// writable by default; but never the root, a system directory, the home
// itself (the jail's home is copy-on-write, or read-only), or /root for a
// user other than root, unless WSH_WRITABLE names it: starting wsh in /etc
// must not make /etc writable.
func writableAndWhy(cfg config.Config, dir string, environ []string) (out []string, why string, err error) {
	add := func(p string) {
		if !contains(out, p) {
			out = append(out, p)
		}
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil || !filepath.IsAbs(d) {
		if _, cerr := config.CheckWritable(dir); cerr != nil {
			err = cerr
		}
		return nil, "", &config.Error{Var: "the working directory", Err: err}
	}
	home := ""
	if h, _ := lookupEnvOK(environ, "HOME"); filepath.IsAbs(h) {
		home, _ = filepath.EvalSymlinks(h)
	}
	notByDefault := func(p string) string { return notWritableByDefault(p, home) }
	if why = notByDefault(d); why == "" {
		add(d)
	}
	if t, err := config.CheckWritable("/tmp"); err == nil {
		add(t)
	}
	if t, _ := lookupEnvOK(environ, "TMPDIR"); t != "" {
		// TMPDIR is a default, not a request: one that does not exist is
		// left out, as it is unusable outside the jail too.
		if r, err := config.CheckWritable(t); err == nil && notByDefault(r) == "" {
			add(r)
		}
	}
	for _, p := range cfg.Writable {
		add(p)
	}
	for _, w := range out {
		if under(d, w) {
			why = "" // writable all the same (it lies in /tmp, say)
		}
	}
	return out, why, nil
}

// notWritableByDefault says why p, a resolved directory, is not made
// writable for being the start directory or $TMPDIR, or "". The root and
// everything beneath a system directory is the system's (starting wsh in
// /etc/cron.d must not let a command add a cron job), but for the
// temporary and web directories of /var; the home itself is copy-on-write
// in the jail; a directory that holds the home (/home) would make the
// home and its rc files writable; /home and /root hold homes.
func notWritableByDefault(p, home string) string {
	switch {
	case p == "/":
		return "/ is a system directory"
	case home != "" && under(home, p) && p != home:
		return p + " holds the home directory " + home
	case p == home:
		return p + " is the home directory"
	case p == "/home" || p == "/root" || under(p, "/root") && os.Getuid() != 0:
		return p + " is where homes are"
	case under(p, "/var/tmp") || under(p, "/var/www"):
		return ""
	}
	for d := range systemDirs {
		if d != "/" && under(p, d) && (!lenientDirs[d] || p == d) {
			return p + " is a system directory"
		}
	}
	return ""
}

// lenientDirs are system directories whose own subdirectories may be a
// project's: /opt/app, /srv/site.
var lenientDirs = map[string]bool{"/opt": true, "/srv": true}

// Writable returns the paths that are writable in the jail.
func (j *Jailer) Writable() []string { return append([]string(nil), j.writable...) }

// Degraded returns the denial after which this Jailer runs commands
// unsandboxed, if the host refused the jail.
func (j *Jailer) Degraded() (verdict.Verdict, bool) { return j.state.Degraded() }

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

func (nopFile) Read([]byte) (int, error)    { return 0, io.EOF }
func (nopFile) Write(b []byte) (int, error) { return len(b), nil }
func (nopFile) Close() error                { return nil }

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

func (j *Jailer) exec(ctx context.Context, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	hc := interp.HandlerCtx(ctx)
	var hidden func(string) bool
	var stat func(string) (fs.FileInfo, error)
	if !j.cfg.NoSandbox {
		hidden, stat = j.policy.hiddenName, j.policy.statView
	}
	path, err := lookPath(hc.Dir, hc.Env, args[0], hidden, stat)
	if err != nil {
		le := err.(*lookupError)
		fmt.Fprintf(hc.Stderr, "wsh: %s\n", le.msg)
		return interp.ExitStatus(le.status)
	}
	c := &command{hc: hc, path: path, args: args, env: execEnv(hc.Env)}
	if j.cfg.NoSandbox {
		return j.plain(ctx, c)
	}
	if _, degraded := j.state.Degraded(); degraded { // never with RequireSandbox
		j.warnOnce()
		return j.plain(ctx, c)
	}
	return j.jailed(ctx, c)
}

type command struct {
	hc   interp.HandlerContext
	path string
	args []string
	env  []string
	// of is the command a helper runs for (runScriptJailed's sh): the
	// name messages show, and no second helper for the helper.
	of *command
}

// name is the command's name as the script gave it, for messages.
func (c *command) name() string {
	if c.of != nil {
		return c.of.name()
	}
	return c.args[0]
}

// A pendingProtection is a request's protection, found by launch.Run while
// the init starts (launch.Request.Protection): once Run returns, prot is
// set (and watched) if it was found, err if it could not be. Neither is
// set when the jail failed before (a refused clone).
type pendingProtection struct {
	prot *protection
	err  error
}

// request is the one place that turns a command into a jail request, for
// commands and for Probe alike.
func (j *Jailer) request(dir, path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) (*launch.Request, *pendingProtection) {
	pp := &pendingProtection{}
	return &launch.Request{
		Spec: proto.Spec{Writable: j.policy.writable, Hidden: j.policy.hiddenNow(), ShmDir: j.shmDir, AllowUnix: j.allowUnix(), Filter: j.filter, HostNetwork: j.cfg.Network == config.NetworkHost, Dir: dir, Path: path, Args: args, Env: env},
		// The protected paths cannot all be known: no jail (the init
		// fails its protect step), rather than one that leaves some
		// writable.
		Protection: func() ([]byte, error) {
			prot, err := j.protector.protection(dir)
			var b []byte
			if err == nil {
				b, err = proto.EncodeProtection(prot.pins, prot.paths)
			}
			if err != nil {
				pp.err = err
				return nil, err
			}
			pp.prot = &prot
			j.watchProtection(pp.prot, true)
			return b, nil
		},
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		KillTimeout: j.KillTimeout,
	}, pp
}

// Probe makes one jail exactly as a command would get it, runs this binary
// in it as proto.ReadbackArg0, and returns the verdict and what the kernel
// said inside. It is what wsh doctor runs; it does not touch the degrade
// state.
func (j *Jailer) Probe(ctx context.Context, dir string) (verdict.Verdict, *proto.Readback, error) {
	if j.filter == nil { // opted out: no jail has been needed so far
		if err := j.compileFilter(); err != nil {
			return verdict.Verdict{}, nil, err
		}
	}
	var out, errb bytes.Buffer
	hs := j.Home()
	req, pp := j.request(dir, "/proc/self/exe", []string{proto.ReadbackArg0, hs.Home, hs.State}, []string{}, nil, &out, &errb)
	defer j.attachHome(req)()
	o := launch.Run(ctx, req)
	if pp.prot != nil {
		j.watchProtection(pp.prot, false)
	}
	if pp.err != nil {
		return verdict.Verdict{}, nil, pp.err
	}
	v := verdict.Classify(o)
	if v.Kind != verdict.Ran {
		return v, nil, nil
	}
	var rb proto.Readback
	if v.Status != 0 {
		return v, nil, fmt.Errorf("the readback in the jail exited %d: %s", v.Status, bytes.TrimSpace(errb.Bytes()))
	}
	if err := json.Unmarshal(out.Bytes(), &rb); err != nil {
		return v, nil, fmt.Errorf("the readback in the jail: %w", err)
	}
	return v, &rb, nil
}

func (j *Jailer) allowUnix() bool { return j.cfg.UnixSockets == config.UnixAllow }

// decide makes one jail before any command runs and settles what the host
// allows: a jail made means every later refusal fails loudly; a denial
// degrades the Runner now (the warning comes with its first command).
// Deciding here, before the script can do anything, is what keeps a
// command, of this session or another, from making a later jail fail with
// EACCES and so switching the jail off.
func (j *Jailer) decide(dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, _ := j.Probe(ctx, dir)
	if v.Kind == verdict.Failed && v.Step == proto.StepHome {
		// The home could not be put in the jail: the jail goes on
		// without it, read-only as before.
		j.stopHome(v.Reason())
		v, _, _ = j.Probe(ctx, dir)
	}
	// Made, or failed for another reason: the host did not refuse it,
	// so no later refusal may degrade. A denial degrades now, or, with
	// RequireSandbox, each command fails closed on its own attempt.
	switch v = j.state.Settle(v); v.Kind {
	case verdict.Denied, verdict.Refused:
		j.releaseHome()
	case verdict.Failed:
		j.startFailure = &v
	}
}

// HostNetwork reports whether jailed commands share the host's network.
func (j *Jailer) HostNetwork() bool { return j.cfg.Network == config.NetworkHost }

func (j *Jailer) jailed(ctx context.Context, c *command) error {
	req, pp := j.request(j.jailDir(c.hc.Dir), c.path, c.args, c.env, c.hc.Stdin, c.hc.Stdout, c.hc.Stderr)
	done := j.attachHome(req)
	j.noticeHome()
	if j.startNote != "" {
		j.startOnce.Do(func() { fmt.Fprintln(j.warn, j.startNoteNow()) })
	}
	j.terminals.note(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr)
	out := launch.Run(ctx, req)
	done()
	if pp.prot != nil {
		j.watchProtection(pp.prot, false)
	}
	if err := ctx.Err(); err != nil {
		// Cancelled: whatever the jail got to, the command's outcome is the
		// cancellation, and it teaches the degrade state nothing.
		return err
	}
	if pp.err != nil {
		// The protected paths cannot all be known: the init failed its
		// protect step on purpose, and the target never started. That
		// is no verdict on the host.
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), pp.err)
		return interp.ExitStatus(126)
	}
	v := j.state.Settle(verdict.Classify(out))
	switch v.Kind {
	case verdict.Ran:
		return exitStatus(v.Status)
	case verdict.NotExecutable:
		return j.notExecutable(ctx, c, v.Errno, true)
	case verdict.Refused:
		return j.refuse(c, v.Message())
	case verdict.Denied:
		j.warnOnce()
		return j.plain(ctx, c)
	}
	msg := v.Message()
	if v.Step == proto.StepHome {
		// The home failed, not the jail: later jails go without it. This
		// command is not run again, since its standard input may be
		// partly read.
		j.stopHome(v.Reason())
		msg += " (later commands get a read-only home)"
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s\n", msg)
	return interp.ExitStatus(126)
}

// watchProtection notes a command's protection as it starts (start) and
// checks it once it ended: which of the protected paths that were
// missing, and that wsh does not make, are there now, and which symlinks
// on the way to a protected path lead elsewhere. The jail could not keep
// the command from either; a program on the host may run what they lead
// to. Each is said once. The Runner's Close checks what commands still
// running (a background job) may have done.
func (j *Jailer) watchProtection(prot *protection, start bool) {
	j.watchMu.Lock()
	if j.watching == nil {
		j.watching = map[*protection]bool{}
	}
	if start {
		j.watching[prot] = true
		j.watchMu.Unlock()
		return
	}
	delete(j.watching, prot)
	j.watchMu.Unlock()
	j.checkProtection(prot)
}

func (j *Jailer) checkProtection(prot *protection) {
	for _, p := range prot.missing {
		_, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			// A directory on the way made unsearchable may hide a file
			// made: said once for the directory, not for each path.
			dir := filepath.Dir(p)
			if _, said := j.madeSaid.LoadOrStore("dir:"+dir, true); !said {
				fmt.Fprintf(j.warn, "wsh: cannot tell whether a command made protected paths in %s (%v): check it before a program on the host reads it\n", dir, unwrapErrno(err))
			}
			continue
		}
		if _, said := j.madeSaid.LoadOrStore(p, true); !said {
			fmt.Fprintf(j.warn, "wsh: a command made %s, a protected path that was missing: check it before a program on the host reads it\n", p)
		}
	}
	for link, target := range prot.links {
		now, err := os.Readlink(link)
		if err == nil && now == target {
			continue
		}
		if _, said := j.madeSaid.LoadOrStore("link:"+link, true); !said {
			if err != nil {
				now = "nothing: " + unwrapErrno(err).Error()
			}
			fmt.Fprintf(j.warn, "wsh: a command changed the symlink %s on the way to a protected path (it led to %s, now %s): check it before a program on the host reads it\n", link, target, now)
		}
	}
}

// waitCommands waits, at most d, until no jailed command runs.
func (j *Jailer) waitCommands(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		j.watchMu.Lock()
		n := len(j.watching)
		j.watchMu.Unlock()
		if n == 0 {
			return
		}
	}
}

// checkWatched checks the protection of every command still running.
func (j *Jailer) checkWatched() {
	j.watchMu.Lock()
	var ps []*protection
	for p := range j.watching {
		ps = append(ps, p)
	}
	j.watchMu.Unlock()
	for _, p := range ps {
		j.checkProtection(p)
	}
}

// startNoteNow is the start directory's note as it stands: a start
// directory that is the home is writable in the jail while the home is
// copy-on-write, but what is written there stays in the jail.
func (j *Jailer) startNoteNow() string {
	if j.startIsHome && j.Home().Overlay {
		return "wsh: the start directory is the home: what commands write there goes to the jail's " +
			"copy-on-write home, not to the host's (wsh home shows it); name it in WSH_WRITABLE to write to the host's"
	}
	return j.startNote
}

// jailDir is the working directory the jail is to enter: dir as the
// jail resolves it (symlinks and magic links followed as the kernel would
// follow them in wsh, /proc/self/cwd to wsh's own), so that the init needs
// no magic link, which it refuses. One it cannot resolve is left as it is.
func (j *Jailer) jailDir(dir string) string {
	if real, _, err := j.policy.realPath(dir); err == nil {
		return real
	}
	return dir
}

// warnOnce prints the one warning of a degraded Runner, if nobody has.
func (j *Jailer) warnOnce() {
	if v, _ := j.state.Degraded(); j.state.Warn() && (j.WarnGate == nil || j.WarnGate()) {
		fmt.Fprintln(j.warn, verdict.Warning(v))
	}
}

// refuse fails a command closed: WSH_REQUIRE_SANDBOX and no jail.
func (j *Jailer) refuse(c *command, why string) error {
	fmt.Fprintf(c.hc.Stderr, "wsh: %s; WSH_REQUIRE_SANDBOX is set, so %s does not run\n", why, c.name())
	return interp.ExitStatus(126)
}

// notExecutable handles an exec of the target that failed: in the jail, or
// unsandboxed.
func (j *Jailer) notExecutable(ctx context.Context, c *command, errno syscall.Errno, jailed bool) error {
	switch {
	case errno == syscall.ENOEXEC && jailed && c.of == nil:
		return j.runScriptJailed(ctx, c)
	case errno == syscall.ENOEXEC && !jailed:
		return j.runScript(ctx, c)
	case errno == syscall.ENOENT:
		// A missing interpreter in a #! line, or a file gone since lookup.
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %s\n", c.name(), "No such file or directory")
		return interp.ExitStatus(127)
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s: %s\n", c.name(), errnoText(errno))
	return interp.ExitStatus(126)
}

func errnoText(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	return string(bytes.ToUpper([]byte(s[:1]))) + s[1:]
}

// plain runs a command unsandboxed.
func (j *Jailer) plain(ctx context.Context, c *command) error {
	cmd := j.plainCmd(ctx, c)
	err := cmd.Start()
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		// A concurrently forked process may briefly hold the file open
		// for writing (go.dev/issue/22315).
		time.Sleep(delay)
		cmd = j.plainCmd(ctx, c)
		err = cmd.Start()
	}
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
			return interp.ExitStatus(126)
		}
		return j.notExecutable(ctx, c, errno, false)
	}
	werr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if cmd.ProcessState == nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], werr)
		return interp.ExitStatus(126)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		return exitStatus(proto.WaitStatus(ws))
	}
	return exitStatus(cmd.ProcessState.ExitCode())
}

func (j *Jailer) plainCmd(ctx context.Context, c *command) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.path)
	cmd.Args = c.args
	cmd.Env = c.env
	cmd.Dir = c.hc.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.hc.Stdin, c.hc.Stdout, c.hc.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = j.KillTimeout
	return cmd
}

// runScript runs a file the kernel refused with ENOEXEC (a script without a
// #! line) as a shell script, as POSIX asks, in a new interpreter whose
// commands go through this same Jailer: degraded or opted out, where
// commands run unsandboxed anyway. (Jailed: runScriptJailed.)
func (j *Jailer) runScript(ctx context.Context, c *command) error {
	b, err := j.readOnHost(c.path)
	if err != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
		return interp.ExitStatus(126)
	}
	if line, _, _ := bytes.Cut(b, []byte("\n")); bytes.IndexByte(line, 0) >= 0 {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: cannot execute binary file\n", c.args[0])
		return interp.ExitStatus(126)
	}
	file, err := syntax.NewParser().Parse(bytes.NewReader(b), c.args[0])
	if err != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %v\n", err)
		return interp.ExitStatus(2)
	}
	r, err := j.NewInterp(c.env, append([]string{"--"}, c.args[1:]...),
		interp.Dir(c.hc.Dir),
		interp.StdIO(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr),
	)
	if err != nil {
		return err
	}
	err = r.Run(ctx, file)
	if _, ok := errors.AsType[interp.ExitStatus](err); ok || err == nil || ctx.Err() != nil {
		return err
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
	return interp.ExitStatus(1)
}

// maxScript bounds a script that wsh reads itself (16 MiB).
const maxScript = 16 << 20

// runScriptJailed runs a file that the jail refused with ENOEXEC (no #!)
// as POSIX asks, with a shell given the file as its first operand: the
// jail's /bin/sh, in a jail of its own. Not wsh's interpreter: the file may
// have been written by a jailed command, and wsh's interpreter would run
// its builtins and redirections in wsh's own process, with the host's view
// (its /proc, /run), blocking on a FIFO for ever.
func (j *Jailer) runScriptJailed(ctx context.Context, c *command) error {
	script := c.path
	if strings.Contains(c.args[0], "/") {
		script = c.args[0] // as typed: $0 is what bash would show
	}
	sh := &command{hc: c.hc, path: "/bin/sh", env: c.env, of: c,
		args: append([]string{"sh", "-c", enoexecSh, c.args[0], script}, c.args[1:]...)}
	return j.jailed(ctx, sh)
}

// enoexecSh runs $1 with /bin/sh and the remaining arguments, unless it
// cannot be read or its first line has a NUL byte (a binary for something
// else): 126, as bash.
const enoexecSh = `p=$1; shift
if ! [ -r "$p" ]; then echo "wsh: $0: Permission denied" >&2; exit 126; fi
n=$(head -n 1 -- "$p" | wc -c); c=$(head -n 1 -- "$p" | tr -d '\000' | wc -c)
if [ "$n" != "$c" ]; then echo "wsh: $0: cannot execute binary file" >&2; exit 126; fi
exec /bin/sh -- "$p" "$@"`

// readOnHost reads a script on the host, degraded or opted out: only a
// regular file, with read(2) on a descriptor opened without blocking (not
// through Go's poller, which would wait on a pollable file that never has
// data), at most maxScript of it, and, degraded, not a hidden one (the
// policy's check on the open descriptor).
func (j *Jailer) readOnHost(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	case st.Size > maxScript:
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
	case !j.cfg.NoSandbox && (j.policy.hiddenName(path) || j.policy.fdHidden(fd)):
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.EACCES}
	}
	var b []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		case len(b)+n > maxScript:
			return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
		}
		b = append(b, buf[:n]...)
	}
}

func exitStatus(status int) error {
	if status == 0 {
		return nil
	}
	return interp.ExitStatus(uint8(status))
}
