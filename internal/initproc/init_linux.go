package initproc

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/fileserver"
	"wsh/internal/homekeeper"
	"wsh/internal/initsys"
	"wsh/internal/proto"
	"wsh/internal/sessioninit"
)

// Init runs the jail init when this process was re-executed as one, and
// never returns in that case. Otherwise it returns at once. Programs that use
// wsh call it first in main.
func Init() {
	initCalled.Store(true)
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case proto.InitArg0:
		os.Exit(initMain())
	case proto.ReadbackArg0:
		os.Exit(readback())
	case proto.KeeperArg0:
		os.Exit(homekeeper.Main())
	case proto.ZygoteArg0:
		os.Exit(sessioninit.ZygoteMain())
	case proto.FilesArg0:
		os.Exit(fileserver.Main())
	}
}

// readSpec reads the spec from SpecFD and closes it. The init reads with
// plain read(2), not an *os.File: os registers every file with its poller
// first, which costs a fresh process more than the read.
func readSpec() (*proto.Spec, error) {
	if len(os.Args) != 1 {
		return nil, errors.New("jail init: bad argv")
	}
	defer unix.Close(proto.SpecFD)
	return proto.ReadSpec(initsys.FDReader(proto.SpecFD))
}

// SetupSteps returns the setup steps in the order the jail init runs them.
func SetupSteps() []degrade.Step {
	out := make([]degrade.Step, len(steps))
	for i, s := range steps {
		out[i] = s.id
	}
	return out
}

func initMain() int {
	// os/signal's first Notify starts two threads (the runtime's signal
	// thread and os/signal's loop): about 0.3 ms, which runs here while
	// the setup does, and is over before the target is forked. A signal
	// before then ends the init by Go's default action (SIGQUIT with a
	// stack dump), before any target runs; one after waits in sigs and
	// is forwarded to the target as soon as it starts.
	sigs := make(chan os.Signal, 8)
	notified := make(chan struct{})
	go func() {
		signal.Notify(sigs, initsys.ForwardedSignals()...)
		// The target may signal its own PID 1; the other signals are
		// caught and dropped, so they neither crash the init (Go dumps
		// its stacks on SIGABRT) nor stop the reaping. Caught, not
		// ignored: an ignored signal would stay ignored in the target.
		signal.Notify(make(chan os.Signal, 1), initsys.DroppedSignals...)
		close(notified)
	}()
	// Capabilities and no_new_privs are per thread (capabilities(7): "each
	// thread has ... capability sets"), and the target is forked from the
	// thread that dropped them, so this goroutine stays on its thread.
	runtime.LockOSThread()
	spec, err := readSpec()
	if err == nil && spec.Rung != degrade.RungFull {
		return lowerMain(spec)
	}
	if err == nil && os.Getpid() != 1 {
		err = errors.New("jail init: not PID 1 of a new PID namespace")
	}
	if err == nil && initsys.InInitialUserNamespace() {
		// Setup in the host's user namespace would act on the host's
		// mounts (run as root under unshare -p, say).
		err = errors.New("jail init: in the host's user namespace")
	}
	if err != nil {
		// Not started by wsh: refuse before touching any mount.
		fmt.Fprintln(os.Stderr, "wsh:", err)
		return proto.ReservedStatus
	}
	st, step, err := setup(spec)
	if err != nil {
		initsys.WriteReport(step, err)
		return proto.ReservedStatus
	}
	<-notified
	if spec.Session {
		return sessioninit.Serve(st, sigs)
	}
	return reap(spec, sigs)
}

// lowerMain is the init of the rungs without namespaces (landlock,
// seccomp): in the host's namespaces, it confines itself and execs the
// target in its place, so there is no PID 1 to reap and nothing between
// the target and wsh's signals; or, for a session, it stays, confined, and
// forks each command (serveLower). A report and ReservedStatus when a
// step, or the exec, fails.
func lowerMain(spec *proto.Spec) int {
	st := &setupState{spec: spec, shm: -1, listener: -1}
	for _, s := range lowerSteps {
		if err := s.run(st); err != nil {
			var le *listenerError
			if errors.As(err, &le) {
				initsys.WriteReport(degrade.StepListener, le.errno)
				return proto.ReservedStatus
			}
			initsys.WriteReport(s.id, err)
			return proto.ReservedStatus
		}
	}
	if spec.Session {
		return sessioninit.ExecZygote(st.listener)
	}
	// The sentinel is close-on-exec: the parent reads EOF once the exec
	// is done, which is the target started.
	setUmask(spec)
	err := unix.Exec(spec.Path, spec.Args, spec.Env)
	initsys.WriteReport(degrade.StepExec, err)
	return proto.ReservedStatus
}

// lowerSteps are the setup of the rungs without namespaces, in order: what
// of the full jail's setup applies without namespaces, and Landlock.
var lowerSteps = []setupStep{
	{degrade.StepParent, checkParent},
	{degrade.StepChdir, chdir},
	{degrade.StepProtect, awaitProtection},
	{degrade.StepDescriptors, cloexecFrom3},
	// no_new_privs before Landlock: without it, landlock_restrict_self
	// needs CAP_SYS_ADMIN, which root in a container lacks.
	{degrade.StepNoNewPrivs, setNoNewPrivs},
	{degrade.StepLandlock, landlockRuleset},
	{degrade.StepCapabilities, dropCapabilitiesLower},
	{degrade.StepSeccomp, loadSeccomp},
}

// A setupStep is one named stage of the jail setup.
type setupStep struct {
	id  degrade.Step
	run func(*setupState) error
}

type setupState struct {
	spec      *proto.Spec
	writable  []int           // detached clones of the writable paths, in spec order
	devices   []int           // detached clones of the device nodes, in devNodes order
	shm       int             // detached clone of spec.ShmDir, or -1
	homeDev   uint64          // the device of the copy-on-write home, once mounted
	pinned    map[string]bool // paths bound onto themselves (pinFD)
	listener  int             // a lower rung's session's seccomp listener (loadSeccomp), or -1
	protector *protector      // a session's: binds what appears later (startProtector)
}

// steps is the one list that defines the order of the setup.
var steps = []setupStep{
	{degrade.StepParent, checkParent},
	{degrade.StepMountPrivate, mountPrivate},
	{degrade.StepDetach, detach},
	{degrade.StepRootReadonly, rootReadonly},
	{degrade.StepRun, coverRun},
	{degrade.StepHome, mountHome},
	{degrade.StepWritable, placeWritable},
	{degrade.StepProtect, protect},
	{degrade.StepHide, hide},
	{degrade.StepProc, mountProc},
	{degrade.StepSys, mountSys},
	{degrade.StepDev, mountDev},
	{degrade.StepStdio, reopenStdio},
	{degrade.StepLoopback, loopbackUp},
	{degrade.StepChdir, chdir},
	{degrade.StepDescriptors, cloexecFrom3},
	// Before the drop: the protector's thread keeps CAP_SYS_ADMIN.
	{degrade.StepCapabilities, startProtector},
	{degrade.StepCapabilities, dropCapabilities},
	{degrade.StepNoNewPrivs, setNoNewPrivs},
	{degrade.StepLandlock, landlockScopes},
	{degrade.StepSeccomp, loadSeccomp},
}

// Setup runs every step in order in the calling process, which must be the
// init of fresh namespaces. It returns the step that failed.
func Setup(spec *proto.Spec) (degrade.Step, error) {
	_, step, err := setup(spec)
	return step, err
}

// setup is Setup, and returns the state the steps left (a session's init
// reopens each command's streams with it).
func setup(spec *proto.Spec) (*setupState, degrade.Step, error) {
	st := &setupState{spec: spec, shm: -1}
	for _, s := range steps {
		if err := s.run(st); err != nil {
			if he := (*homeError)(nil); errors.As(err, &he) {
				return st, degrade.StepHome, err
			}
			return st, s.id, err
		}
	}
	return st, degrade.StepNone, nil
}

// checkParent asks for SIGKILL when wsh dies, then checks that wsh did not
// die before that: the read end of the sentinel is held only by the wsh that
// started this jail, so a POLLERR on our write end means it is gone.
func checkParent(*setupState) error {
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_PDEATHSIG)", err)
	}
	fds := []unix.PollFd{{Fd: proto.ReportFD, Events: unix.POLLOUT}}
	if _, err := initsys.RetryEINTR(func() (int, error) { return unix.Poll(fds, 0) }); err != nil {
		return os.NewSyscallError("poll", err)
	}
	if fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
		os.Exit(proto.ReservedStatus) // nobody is left to read a report
	}
	return nil
}
