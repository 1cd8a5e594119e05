//go:build linux && cgo

package confine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/builtins"
	"wsh/internal/cowhome"
	"wsh/internal/gitmediate"
	"wsh/internal/initproc"
	"wsh/internal/jailnet"
	"wsh/internal/launch"
	"wsh/internal/netproxy"
	"wsh/internal/paths"
	"wsh/internal/protect"
	"wsh/internal/proto"
	"wsh/internal/seccomp"
	"wsh/internal/session"
	"wsh/internal/shellfs"
	"wsh/internal/streams"
	"wsh/internal/umask"
	"wsh/internal/watch"
	"wsh/internal/worktree"
)

// A Jailer runs external commands for an interp.Runner: in the jail, or
// unsandboxed when opted out or after the host refused the jail. One Jailer
// holds the degrade state of one Runner.
type Jailer struct {
	cfg      config.Config
	writable []string
	hiding   paths.Hiding
	files    *shellfs.Files          // the shell's own file access, in the jail
	startDir string                  // the directory the Jailer was made in
	fifoDir  string                  // the interpreter's own temporary directory
	filters  map[degrade.Rung][]byte // each rung's seccomp program, compiled once
	// sessionFilters are the lower rungs' sessions' programs (their
	// zygotes', with SessionForkGroup for SessionGroup).
	sessionFilters map[degrade.Rung][]byte
	// splitFilter is the full rung's session's (compileSplitFilter).
	splitFilter [2][]byte
	// gitFilter is the full rung's git config group alone
	// (proto.Spec.GitFilter), compiled once.
	gitFilter []byte
	// gitNoRoom says once that a host's supervisor left no room for the
	// git config group's listener.
	gitNoRoom sync.Once
	// rung is the rung of the ladder commands get: RungFull, or the one
	// decide stepped down to when the host refused the full jail. It is
	// set before any command runs.
	rung degrade.Rung
	// tried are the rungs decide made a jail on, with their verdicts.
	tried  []RungTry
	shmDir proto.PathID // fifoDir, bound read-only in the jail
	warn   io.Writer
	state  degrade.State
	home   cowhome.Home
	// protector says which paths beneath the writable ones are read-only.
	protector *protect.Protector
	// startNote is said once, with the first command, when the start
	// directory is not writable.
	startNote   string
	startIsHome bool
	startOnce   sync.Once
	// gitNote is said once, with the first git command, when the start
	// directory lies below the top of a repository that is not writable.
	gitNote string
	gitOnce sync.Once
	// watch says what commands did to the protected paths that their
	// jails could not keep them from, and what else is said once.
	watch     *watch.Watch
	worktrees worktree.Checker // the worktrees a command added off the host
	noGroups  atomic.Bool      // setpgid is refused: unsandboxed commands stay in wsh's group
	// writeMu is held (read) by a write of the shell's from its
	// protection to its open, and for good by Close before the
	// placeholders go.
	writeMu   sync.RWMutex
	terminals streams.Terminals // put back as they were when the Runner closes
	given     streams.Given     // the Runner's streams' status flags, put back after each command
	// KillTimeout is the time between SIGTERM and SIGKILL on cancellation.
	KillTimeout time.Duration
	// CallHandler, if set, is the caller's interp.CallHandler, in every
	// interpreter NewInterp makes (a script without #! run unsandboxed
	// included).
	CallHandler interp.CallHandlerFunc
	// WarnGate, if set, is asked before the one warning of a degraded
	// Jailer is printed (the Jailer says it once in any case): false
	// leaves it unsaid, as when it was said once for the whole process.
	WarnGate func() bool
	// sessions hold the Runner's one jail (WSH_JAIL=session), once decide
	// made it (and the one made in its place when it went stale); none
	// for a jail per command.
	sessions *session.Sessions
	// sinceRunEnd: an external command ran since the last Run's end
	// (EndChecks).
	sinceRunEnd atomic.Bool
	// closeOnce makes Close's work once; closeErr is what it returned.
	closeOnce sync.Once
	closeErr  error
	// net is the jails' network: wsh's proxy, with WSH_NETWORK=proxy or
	// none.
	net *jailnet.Network
	// startFailure is the verdict of the jail made when the Jailer was,
	// when it failed for another reason than a refusal.
	startFailure *degrade.Verdict
	running      runningSet // the external commands running (Interrupt, kill)

	builtins *builtins.Set // wsh's builtins, and the background jobs of the Jailer's scripts
}

// StartFailure returns the verdict of the jail NewJailer made, when it
// could not be made for a reason other than the host refusing it: no
// command would get a jail.
func (j *Jailer) StartFailure() (degrade.Verdict, bool) {
	if j.startFailure == nil {
		return degrade.Verdict{}, false
	}
	return *j.startFailure, true
}

// LastFailure returns the verdict of the last command whose jail could
// not be made for a reason other than the host refusing it.
func (j *Jailer) LastFailure() (degrade.Verdict, bool) { return j.state.Failed() }

// Refused returns, with RequireSandbox, the last refusal of the jail by
// the host: commands fail closed.
func (j *Jailer) Refused() (degrade.Verdict, bool) {
	if v, below := j.belowFloor(); below {
		return v, true
	}
	return j.state.Refused()
}

// Config returns the Jailer's configuration.
func (j *Jailer) Config() config.Config { return j.cfg }

// NewJailer makes a Jailer. dir is the working directory the Runner starts
// in, which is writable in the jail along with /tmp, $TMPDIR (from environ,
// when it exists) and cfg.Writable. The one warning goes to warn.
func NewJailer(cfg config.Config, dir string, environ []string, warn io.Writer) (*Jailer, error) {
	given := cfg.Writable // Validate resolves a copy
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
	var real map[string]string
	if !cfg.NoSandbox {
		var err error
		if real, err = paths.CheckGround(given, cfg.Writable, dir, environ); err != nil {
			return nil, err
		}
	}
	w, startWhy, err := paths.WritableAndWhy(cfg, dir, environ, real)
	if err != nil {
		return nil, err
	}
	worktreeNote := ""
	if !cfg.NoSandbox && startWhy == "" && real[dir] != "" {
		// Started in a linked worktree: its repository's .git too.
		w, worktreeNote = worktree.AddLinkedCommon(real[dir], w, environ)
	}
	j := &Jailer{cfg: cfg, writable: w, warn: warn, KillTimeout: proto.DefaultKillTimeout}
	j.watch = watch.New(warn, func() degrade.Rung { return j.rung })
	j.worktrees = worktree.Checker{Writable: w, Sample: j.running.sample, Warn: warn, Once: j.watch.Once}
	j.builtins = j.newBuiltins()
	// Until a jail's init hands it a listener, the proxy holds nothing.
	if j.net, err = jailnet.New(cfg, warn, landlockABI()); err != nil {
		return nil, err
	}
	if cfg.RequireSandbox != config.FloorNone {
		floor, ok := degrade.ParseRung(string(cfg.RequireSandbox))
		if !ok { // Validate accepts only the rungs' names
			return nil, fmt.Errorf("WSH_REQUIRE_SANDBOX=%s is not a rung", cfg.RequireSandbox)
		}
		j.state.SetFloor(floor)
	}
	projects := append([]string(nil), cfg.Writable...)
	start := ""
	if startWhy == "" {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			projects = append(projects, d) // the start directory
			start = d
		}
	}
	j.protector = protect.NewProtector(w, projects, cfg.Protect, environ)
	j.protector.Start = start
	if startWhy != "" && !cfg.NoSandbox {
		j.startNote = "wsh: the start directory is not writable in the jail: " + startWhy +
			"; name it in WSH_WRITABLE to write to it"
		j.startIsHome = strings.HasSuffix(startWhy, " is the home directory")
	}
	if worktreeNote != "" {
		j.startNote = worktreeNote // said, as the start directory's, with the first command
	}
	if startWhy == "" && worktreeNote == "" && real[dir] != "" {
		j.gitNote = worktree.RepoAboveNote(real[dir], w)
	}
	var plan launch.HomePlan
	var why string
	var failed bool
	hidden := cfg.Hide
	if !cfg.NoSandbox {
		// wsh's state directory (the copy-on-write home's layers) is
		// hidden from every jail and from the shell itself.
		plan, why, failed = paths.PlanHome(cfg, environ, w)
		plan.Project, plan.Scope = paths.ProjectOf(dir, w, cfg)
		if why == "" {
			if plan, err = paths.MakeState(plan, environ, w); err != nil {
				why, failed = err.Error(), true
			}
		}
		hidden = append(append([]string(nil), hidden...), paths.ExistingStates(environ, plan)...)
		state := ""
		if why == "" {
			state = plan.State // made
		}
		j.protector.KeepLedgers(state, startTime, j.sayOnce)
	}
	if j.hiding, err = paths.NewHiding(w, hidden); err != nil {
		return nil, err
	}
	j.files, j.startDir = j.newFiles(), dir
	// Nothing is protected in a hidden path: the hide covers it.
	j.protector.Hidden = j.hiding.HiddenPaths
	j.sessions = session.New(sessionCore{j}, &j.hiding, &j.shmDir, j.protector, warn)
	if !cfg.NoSandbox {
		if d, err := filepath.EvalSymlinks(dir); err == nil && j.hiding.NameHidden(d) {
			// The jail would cover it: no command could start there.
			return nil, &config.Error{Var: "the working directory", Err: fmt.Errorf("%s is hidden (WSH_HIDE, or wsh's state directory): start wsh elsewhere", d)}
		}
		launch.PrepareSelfCopy()
		id, err := makeFifoDir()
		switch {
		case err == nil:
			j.fifoDir, j.shmDir = id.Path, id
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS):
			// /dev/shm refused to wsh itself (inside another wsh's
			// jail on the landlock rung, say): no directory a command
			// could write to would do (interp.go), so none.
			j.fifoDir = noFifoDir
			j.sayOnce(fmt.Sprintf("wsh: process substitution is unavailable: %v", err))
		default:
			return nil, err
		}
		if err := j.compileFilter(degrade.RungFull); err != nil {
			j.Close()
			return nil, err
		}
		if p := j.home.Setup(plan, environ, why, failed, j.writable, j.warn); p != "" {
			j.hiding.HomePath = p
		}
		j.decide(dir)
		j.requireHome()
	}
	return j, nil
}

// compileFilter compiles, once, the seccomp program that every jail init
// of this Jailer's rung loads; the init has no compiler of its own.
func (j *Jailer) compileFilter(rung degrade.Rung) error {
	if j.filters[rung] != nil {
		return nil
	}
	f, err := j.compile(rung, false)
	if err != nil {
		return err
	}
	if j.filters == nil {
		j.filters = map[degrade.Rung][]byte{}
	}
	j.filters[rung] = f
	return nil
}

// compileSessionFilter compiles, once, the program of a lower rung's
// session's zygote (proto.SessionForkGroup for proto.SessionGroup).
func (j *Jailer) compileSessionFilter(rung degrade.Rung) error {
	if j.sessionFilters[rung] != nil {
		return nil
	}
	f, err := j.compile(rung, true)
	if err != nil {
		return err
	}
	if j.sessionFilters == nil {
		j.sessionFilters = map[degrade.Rung][]byte{}
	}
	j.sessionFilters[rung] = f
	return nil
}

// compileGitFilter compiles, once, the full rung's git config group alone.
func (j *Jailer) compileGitFilter() ([]byte, error) {
	if j.gitFilter != nil {
		return j.gitFilter, nil
	}
	f, err := seccomp.CompileGroup(proto.GitGroup)
	if err != nil {
		return nil, err
	}
	j.gitFilter = f
	return f, nil
}

// compileSplitFilter compiles, once, the full rung's session's two
// programs (seccomp.CompileSplit): for every thread of its init, and for
// the thread that forks the commands.
func (j *Jailer) compileSplitFilter() ([2][]byte, error) {
	if j.splitFilter[0] != nil {
		return j.splitFilter, nil
	}
	spec := proto.Spec{AllowUnix: j.allowUnix(degrade.RungFull), Rung: degrade.RungFull, HostNetwork: j.HostNetwork(), Session: true}
	threads, fork, err := seccomp.CompileSplit(spec.SkipGroups()...)
	if err != nil {
		return j.splitFilter, err
	}
	j.splitFilter = [2][]byte{threads, fork}
	return j.splitFilter, nil
}

func (j *Jailer) compile(rung degrade.Rung, session bool) ([]byte, error) {
	spec := proto.Spec{AllowUnix: j.allowUnix(rung), Rung: rung, HostNetwork: j.HostNetwork(), Session: session}
	if j.net.Lower(rung) {
		// The filter leaves TCP to Landlock, which limits it to the
		// proxy's port: the proxy listens before any command runs.
		port, err := j.net.HostPort()
		if err != nil {
			return nil, err
		}
		spec.ProxyPort = port
	}
	return seccomp.CompileFilter(spec.SkipGroups()...)
}

// Writable returns the paths that are writable in the jail.
func (j *Jailer) Writable() []string { return append([]string(nil), j.writable...) }

// Degraded returns the denial after which this Jailer runs commands
// unsandboxed, if the host refused the jail.
func (j *Jailer) Degraded() (degrade.Verdict, bool) { return j.state.Degraded() }

func (j *Jailer) exec(ctx context.Context, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err, ok := j.builtins.Run(ctx, args); ok {
		return err
	}
	return j.external(ctx, args)
}

// external runs an external command: found in PATH, in the jail.
func (j *Jailer) external(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	var stat func(string) (fs.FileInfo, error)
	var failed error // the file server's failure, not an answer
	if _, refused := j.Refused(); j.jailedFiles() && !refused {
		// In PATH as the jail finds it.
		stat = func(p string) (fs.FileInfo, error) {
			fi, err := j.files.StatFollow(ctx, p)
			if failed == nil && shellfs.ServerFailed(ctx, err) {
				failed = err
			}
			return fi, err
		}
	}
	path, err := builtins.LookPath(hc.Dir, hc.Env, args[0], nil, stat)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err() // cancelled while the jail looked it up: not a lookup's answer
	case err != nil && j.builtins.Killed(hc) != 0:
		// kill %N came while the jail looked it up.
		return hc.Builtin(ctx, []string{"exit", strconv.Itoa(128 + int(j.builtins.Killed(hc)))})
	case failed != nil:
		fmt.Fprintf(hc.Stderr, "wsh: %s: %v; the script stops\n", args[0], unwrapPathErr(failed))
		return failClosed(ctx)
	}
	if err != nil {
		le := err.(*builtins.LookupError)
		fmt.Fprintf(hc.Stderr, "wsh: %s\n", le.Msg)
		return interp.ExitStatus(le.Status)
	}
	c := &command{hc: hc, path: path, args: args, env: execEnv(hc.Env)}
	if rs, ok := ctx.Value(runKey{}).(*runState); ok {
		rs.ranCommand.Store(true)
	}
	j.sinceRunEnd.Store(true)
	c.rc = j.running.start(c)
	defer j.commandEnded(c.rc)
	if sig := j.builtins.Killed(hc); sig != 0 {
		// kill %N came after the call handler's look and before this
		// command was running, where it would have got the signal.
		return hc.Builtin(ctx, []string{"exit", strconv.Itoa(128 + int(sig))})
	}
	wts := j.worktrees.Take(hc.Dir)
	err = j.run(ctx, c)
	err = j.worktrees.Check(wts, err)
	// What the shell's redirections wrote, its own and those before it,
	// once each file is written (watch.ShellWrite), and what was written
	// through a path bound read-only during the run (watch.Bound).
	j.watch.CheckShellWrites()
	j.watch.CheckBound()
	return interrupted(ctx, c.rc, err)
}

// run runs c where the Jailer's state says: in the jail, on a lower rung,
// unsandboxed, or not at all.
func (j *Jailer) run(ctx context.Context, c *command) error {
	if j.cfg.NoSandbox {
		return j.plain(ctx, c)
	}
	if _, degraded := j.state.Degraded(); degraded { // never with RequireSandbox=full
		if v, below := j.belowFloor(); below {
			return j.refuse(ctx, c, v.Message()+"; the "+j.rung.String()+" rung is below the floor")
		}
		j.warnOnce()
		if j.rung != degrade.RungNone {
			return j.jailed(ctx, c) // a lower rung of the ladder
		}
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
	// rc is the command as Interrupt and kill see it.
	rc *running
}

// signals are the signals an interrupt or kill sends the command.
func (c *command) signals() <-chan syscall.Signal {
	if c.rc == nil {
		return nil // a command of the Jailer's own tests
	}
	return c.rc.sigs
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
	prot *protect.Protection
	err  error
	git  *gitmediate.Mediator // the full rung's answer to renames
}

// request is the one place that turns a command into a jail request, for
// commands and for Probe alike.
func (j *Jailer) request(rung degrade.Rung, dir, path string, args, env []string, stdin io.Reader, stdout, stderr io.Writer) (*launch.Request, *pendingProtection) {
	pp := &pendingProtection{}
	spec := proto.Spec{Writable: j.hiding.Writable, Hidden: j.hiding.HiddenNow(), ShmDir: j.shmDir, AllowUnix: j.allowUnix(rung), Filter: j.filters[rung], HostNetwork: j.cfg.Network == config.NetworkHost, Rung: rung, Dir: dir, Path: path, Args: args, Env: env}
	var gitErr error
	var gitEnd *os.File
	if rung != degrade.RungFull {
		// The full rung's comes with its bridge (jailnet.Network.Attach).
		spec.ProxyPort = j.net.Port(rung)
	} else {
		spec.GitFilter, gitErr = j.compileGitFilter()
		if gitErr == nil {
			pp.git, gitEnd, gitErr = gitmediate.New(j.warn, &j.gitNoRoom)
		}
	}
	return &launch.Request{
		Git:  gitEnd,
		Spec: spec,
		// The protected paths cannot all be known: no jail (the init
		// fails its protect step), rather than one that leaves some
		// writable.
		Protection: func() ([]byte, error) {
			if gitErr != nil {
				pp.err = fmt.Errorf("the git config's socket: %w", gitErr)
				return nil, pp.err
			}
			prot, err := j.protector.Protection(dir, rung == degrade.RungFull)
			var b []byte
			if err == nil {
				b, err = proto.EncodeProtection(prot.Pins, prot.Paths)
			}
			if err != nil {
				pp.err = err
				return nil, err
			}
			pp.prot = &prot
			if rung == degrade.RungFull {
				j.watch.NoteConfigs(&prot)
			}
			if pp.git != nil {
				pp.git.SetConfigs(prot.Paths)
			}
			if rung != degrade.RungFull {
				prot.TakeStamps()
			}
			j.watch.Protection(pp.prot, true)
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
func (j *Jailer) Probe(ctx context.Context, dir string) (degrade.Verdict, *proto.Readback, error) {
	return j.probe(ctx, dir, degrade.RungFull, true)
}

// probe is Probe on the given rung. With askProxy (doctor's), the
// readback is given the proxy as a command is, and asks it for a tunnel
// it refuses; decide's probes do not, or every Runner would say a
// refusal.
func (j *Jailer) probe(ctx context.Context, dir string, rung degrade.Rung, askProxy bool) (degrade.Verdict, *proto.Readback, error) {
	if err := j.compileFilter(rung); err != nil {
		return degrade.Verdict{}, nil, err
	}
	var out, errb bytes.Buffer
	hs := j.Home()
	// The jail listens for the proxy as a command's does.
	env := []string{}
	if askProxy {
		env = j.net.Env(env, rung)
	}
	req, pp := j.request(rung, dir, "/proc/self/exe", []string{proto.ReadbackArg0, hs.Home, hs.State}, env, nil, &out, &errb)
	defer j.home.Attach(req)()
	br, err := j.net.Attach(req)
	if err != nil {
		return degrade.Verdict{}, nil, err
	}
	defer br.Close()
	o := launch.Run(ctx, req)
	if pp.prot != nil {
		j.watch.Protection(pp.prot, false)
	}
	if pp.err != nil {
		return degrade.Verdict{}, nil, pp.err
	}
	v := degrade.Classify(o)
	if v.Kind != degrade.Ran {
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

func (j *Jailer) allowUnix(rung degrade.Rung) bool {
	return j.cfg.UnixSockets == config.UnixAllow && (rung == degrade.RungFull || !j.unixWithheld())
}

// UnixWithheld says that WSH_UNIX_SOCKETS=allow is asked for and not in
// force: the Jailer's commands run on a lower rung, and unixWithheld.
func (j *Jailer) UnixWithheld() bool { return j.rung != degrade.RungFull && j.unixWithheld() }

// unixWithheld says that WSH_UNIX_SOCKETS=allow is not in force on the
// rungs without namespaces: WSH_HIDE names a path, and Landlock (to ABI 7)
// does not govern connect(2) to a socket's path, so a daemon's socket
// beneath a hidden path (gpg-agent's in ~/.gnupg) would be in reach. The
// filter's unix group stays, and the warning says so. wsh's state
// directory, hidden too, does not count: wsh makes it (0700) for the
// copy-on-write home's layers, which the lower rungs do not use, and no
// daemon binds a socket there.
func (j *Jailer) unixWithheld() bool {
	return j.cfg.UnixSockets == config.UnixAllow && len(j.cfg.Hide) > 0
}

// decide makes one jail before any command runs and settles what the host
// allows: a jail made means every later refusal fails loudly; a denial
// degrades the Runner now (the warning comes with its first command).
// Deciding here, before the script can do anything, is what keeps a
// command, of this session or another, from making a later jail fail with
// EACCES and so switching the jail off.
func (j *Jailer) decide(dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := func() degrade.Verdict {
		if j.cfg.Jail == config.JailSession {
			// The session's jail is the probe: the host's verdict on it
			// is the verdict on every command's.
			return j.sessions.Start(ctx, dir, degrade.RungFull)
		}
		v, _, _ := j.probe(ctx, dir, degrade.RungFull, false)
		return v
	}
	v := first()
	if v.Kind == degrade.Failed && v.Step == degrade.StepHome {
		// The home could not be put in the jail: the jail goes on
		// without it, read-only as before.
		j.home.Stop(v.Reason())
		v = first()
	}
	// Made, or failed for another reason: the host did not refuse it,
	// so no later refusal may degrade. A denial degrades now, or, with
	// RequireSandbox, each command fails closed on its own attempt.
	j.tried = append(j.tried, RungTry{degrade.RungFull, v})
	switch v = j.state.Settle(v); v.Kind {
	case degrade.Denied, degrade.Refused:
		j.home.Release()
	case degrade.Failed:
		j.startFailure = &v
	}
	if v.Kind != degrade.Denied {
		return
	}
	// Refused: down the ladder, a rung at a time, each made once as a
	// command would get it. The first denial stays the Runner's cause;
	// a lower rung made settles that the host allows it, so that a later
	// refusal there fails loudly as above.
	next, down := degrade.StepDown(j.rung, v)
	for down && next != degrade.RungNone {
		j.rung = next
		if err := j.compileFilter(j.rung); err != nil {
			f := degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepSeccomp, Err: err}
			j.startFailure = &f
			return
		}
		var lv degrade.Verdict
		if j.cfg.Jail == config.JailSession {
			// As on the full rung, the session's jail is the probe.
			lv = j.sessions.Start(ctx, dir, j.rung)
		} else {
			lv, _, _ = j.probe(ctx, dir, j.rung, false)
		}
		j.tried = append(j.tried, RungTry{j.rung, lv})
		if next, down = degrade.StepDown(j.rung, lv); down {
			continue
		}
		if lv = j.state.Settle(lv); lv.Kind == degrade.Failed {
			// Neither the rung nor a reason to step down: loud.
			j.startFailure = &lv
		}
		return
	}
	j.rung = degrade.RungNone
}

// requireHome fails the Jailer when WSH_HOME=cow and its commands do not
// get the copy-on-write home: no command runs (exit 126). A jail refused
// below WSH_REQUIRE_SANDBOX's floor is left to fail each command closed.
func (j *Jailer) requireHome() {
	if j.cfg.Home != config.HomeCow || j.startFailure != nil {
		return
	}
	if _, refused := j.state.Refused(); refused {
		return
	}
	if err := j.home.Missing(j.rung); err != nil {
		v := degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepHome, Err: err}
		j.startFailure = &v
	}
}

// Home says what the jail's home is.
func (j *Jailer) Home() cowhome.Status { return j.home.Status() }

// belowFloor returns the host's refusal when the rung in force is below
// the floor: no command runs then.
func (j *Jailer) belowFloor() (degrade.Verdict, bool) {
	v, degraded := j.state.Degraded()
	return v, degraded && !j.state.Accepts(j.rung)
}

// A RungTry is one rung decide made a jail on, and what came of it.
type RungTry struct {
	Rung    degrade.Rung
	Verdict degrade.Verdict
}

// Tried returns the rungs decide made a jail on, in order, with their
// verdicts (none when opted out).
func (j *Jailer) Tried() []RungTry { return append([]RungTry(nil), j.tried...) }

// Rung is the rung of the ladder that the Jailer's commands get.
func (j *Jailer) Rung() degrade.Rung { return j.rung }

// HostNetwork reports whether jailed commands share the host's network.
func (j *Jailer) HostNetwork() bool { return j.cfg.Network == config.NetworkHost }

func (j *Jailer) jailed(ctx context.Context, c *command) error {
	dir := j.jailDir(ctx, c.hc.Dir)
	if j.rung == degrade.RungFull {
		j.home.Notice() // a lower rung's warning says the home is read-only
	}
	if j.startNote != "" {
		j.startOnce.Do(func() { fmt.Fprintln(j.warn, j.startNoteNow()) })
	}
	if j.gitNote != "" && filepath.Base(c.path) == "git" {
		j.gitOnce.Do(func() { fmt.Fprintln(j.warn, j.gitNote) })
	}
	c.hc.Stdin, c.hc.Stdout, c.hc.Stderr = streams.ThroughPipes(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr)
	j.terminals.Note(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr)
	if j.sessions.Current() != nil {
		sc := &session.Command{Name: c.name(), Umask: func() (uint32, error) { return umask.Shell(c.hc) }, Launch: launch.Command{
			Path: c.path, Args: c.args, Env: j.net.Env(c.env, j.rung), Dir: dir,
			Stdin: c.hc.Stdin, Stdout: c.hc.Stdout, Stderr: c.hc.Stderr, KillTimeout: j.KillTimeout,
			Signals: c.signals(),
		}}
		if out, err, ok := j.sessions.Run(ctx, j.rung, sc); err != nil {
			return err
		} else if ok {
			return j.outcome(ctx, c, out)
		}
	}
	req, pp := j.request(j.rung, dir, c.path, c.args, j.net.Env(c.env, j.rung), c.hc.Stdin, c.hc.Stdout, c.hc.Stderr)
	req.Signals = c.signals()
	// Always given: the init, cloned from wsh, would otherwise take the
	// process's umask as it is at the clone, which another shell's
	// redirection may have changed for a moment (umask.With).
	m, err := umask.Shell(c.hc)
	if err != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), err)
		return interp.ExitStatus(126)
	}
	req.Spec.Umask, req.Spec.UmaskSet = uint16(m), true
	done := j.home.Attach(req)
	br, err := j.net.Attach(req)
	if err != nil {
		done()
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), err)
		return interp.ExitStatus(126)
	}
	out := launch.Run(ctx, req)
	done()
	br.Close()
	if pp.prot != nil {
		j.watch.Protection(pp.prot, false)
	}
	if err := ctx.Err(); err == nil && pp.err != nil {
		// The protected paths cannot all be known: the init failed its
		// protect step on purpose, and the target never started. That
		// is no verdict on the host.
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), pp.err)
		return interp.ExitStatus(126)
	}
	return j.outcome(ctx, c, out)
}

// outcome is what a command's launch comes to: in its own jail or in the
// session's.
func (j *Jailer) outcome(ctx context.Context, c *command, out degrade.Facts) error {
	if err := ctx.Err(); err != nil {
		// Cancelled: whatever the jail got to, the command's outcome is the
		// cancellation, and it teaches the degrade state nothing.
		return err
	}
	v := j.state.Settle(degrade.Classify(out))
	switch v.Kind {
	case degrade.Ran:
		return exitStatus(v.Status)
	case degrade.NotExecutable:
		return j.notExecutable(ctx, c, v.Errno, true)
	case degrade.Refused:
		return j.refuse(ctx, c, v.Message())
	case degrade.Denied:
		j.warnOnce()
		return j.plain(ctx, c)
	}
	msg := v.Message()
	if v.Step == degrade.StepHome {
		// The home failed, not the jail: later jails go without it. This
		// command is not run again, since its standard input may be
		// partly read.
		j.home.Stop(v.Reason())
		msg += " (later commands get a read-only home)"
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s\n", msg)
	return interp.ExitStatus(126)
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

// sayOnce says msg on the warning stream, once for each msg.
func (j *Jailer) sayOnce(msg string) {
	if j.watch.Once("session:" + msg) {
		fmt.Fprintln(j.warn, msg)
	}
}

// unwrapPathErr is err without its *os.PathError.
func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// hostDir is dir resolved on the host: the start directory, for the
// session's jail, made before any jail can resolve it.
func (j *Jailer) hostDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// jailDir is the working directory the jail is to enter: dir as the
// jail resolves it (the file server's proto.FileResolve; on the host where
// the shell's file access is), so that the init needs no symlink or magic
// link, which it refuses. One it cannot resolve is left as it is.
func (j *Jailer) jailDir(ctx context.Context, dir string) string {
	if j.jailedFiles() {
		if real, err := j.files.Resolve(ctx, dir); err == nil {
			return real
		}
	} else if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// warnOnce prints the one warning of a degraded Runner, if nobody has.
func (j *Jailer) warnOnce() {
	if v, _ := j.state.Degraded(); j.state.Warn() && (j.WarnGate == nil || j.WarnGate()) {
		var withheld []string
		if j.UnixWithheld() {
			withheld = append(withheld, "WSH_UNIX_SOCKETS=allow is withheld while WSH_HIDE is set (Landlock cannot keep "+
				"a unix socket beneath a hidden path from being connected to), so socket(AF_UNIX) is refused")
		}
		if w := j.net.Withheld(j.rung); w != "" {
			withheld = append(withheld, w)
		}
		fmt.Fprintln(j.warn, degrade.Warning(v, j.rung, landlockABI(), withheld...))
	}
}

// refuse fails a command closed: WSH_REQUIRE_SANDBOX and no jail. The
// script's Run ends with it (StartRun): a script that went on would run
// its builtins and redirections, and could end 0, as if it had done its
// work.
// With package wrap's Middleware the script ends there too, with 126.
func (j *Jailer) refuse(ctx context.Context, c *command, why string) error {
	fmt.Fprintf(c.hc.Stderr, "wsh: %s; WSH_REQUIRE_SANDBOX is set, so %s does not run; the script stops\n", why, c.name())
	return failClosed(ctx)
}

// Blocked returns the hosts the proxy refused, in the order of their
// first refusal.
func (j *Jailer) Blocked() []netproxy.Refusal { return j.net.Blocked() }
