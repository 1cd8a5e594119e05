//go:build linux && cgo

package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
)

// exitGrace bounds the waits after the init has exited when the request
// has no KillTimeout.
const exitGrace = 2 * time.Second

// SelfExe is the binary re-executed as the jail init.
const SelfExe = "/proc/self/exe"

// A Request is one command to run in a jail.
type Request struct {
	// Spec is the jail and the target, whose environment is Spec.Env;
	// the init runs with an empty one.
	Spec   proto.Spec
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// KillTimeout is how long a cancelled jail has after SIGTERM before it
	// is killed (0: killed at once), and how long the standard streams'
	// copies may go on after the jail has exited (0: exitGrace).
	KillTimeout time.Duration
	// HomeMount, when Spec.Home is set, is a detached mount of the jail's
	// copy-on-write home, and HomeLock that mount's lock, which the init
	// holds for as long as it lives (Home.Clone). Run closes neither.
	HomeMount, HomeLock *os.File
	// Protection, if set, finds the pins and the protected paths and
	// returns them encoded (proto.EncodeProtection), for the init to read
	// on proto.ProtectFD when its setup reaches them: Run calls it once the
	// init is started, so that it runs while the init starts. An error,
	// or a cancellation meanwhile, sends none: the jail fails at its
	// protect step, and the target never starts. Without it, Spec.Pins
	// and Spec.Protect are sent.
	Protection func() ([]byte, error)
	// Proxy, with Spec.ProxyPort on the full rung, is the init's end of
	// a unix socket on which it sends its proxy listener (proto.ProxyFD).
	// Run does not close it.
	Proxy *os.File
	// Git, on the full rung, is the init's end of a unix socket on which
	// it sends its seccomp filter's listener (proto.GitFD), for wsh to
	// answer every rename (proto.GitGroup). Run closes it once the init
	// has it (or has failed to start): wsh's end then reads the listener,
	// or EOF.
	Git *os.File
	// Signals, if set, are signals for the command while it runs (an
	// interrupt, as a terminal's Ctrl-C): the target's process group
	// gets each once its setup is over; one sent before is held until
	// then, and dropped if the target never starts.
	Signals <-chan syscall.Signal
}

// Run runs the request in a jail and returns what the parent saw, for
// degrade.Classify to judge.
func Run(ctx context.Context, req *Request) degrade.Facts {
	if err := ctx.Err(); err != nil {
		return degrade.Facts{StartErr: err}
	}
	var started atomic.Bool
	p, rd, cio, prot, err := start(req, nil)
	if err != nil {
		return startFailed(err, req.Spec.Rung, req.Spec.HostNetwork)
	}
	defer rd.Close()
	// Sent from its own goroutine: a write larger than the pipe waits
	// for the init, whose cancellation must not wait for the write.
	protSent := make(chan struct{})
	go func() {
		defer close(protSent)
		sendProtection(ctx, prot, req)
	}()
	defer func() { <-protSent }() // the init is gone by then: the write ends
	cio.start()
	report := make(chan []byte, 1)
	setupOver := make(chan struct{})
	go func() {
		b := readSentinel(rd, func() { started.Store(true) })
		close(setupOver)
		report <- b
	}()
	exited := make(chan struct{})
	go stopOnCancel(ctx, p, &started, setupOver, req.KillTimeout, exited)
	fw := &forwarder{p: p, group: req.Spec.Rung != degrade.RungFull}
	if req.Signals != nil {
		go fw.forward(req.Signals, &started, setupOver, exited)
	}
	// Exited, not reaped: its pid is still its own, for the signals
	// until now and the kill below.
	waitExited(p.Pid)
	fw.reaping()
	if req.Spec.Rung != degrade.RungFull {
		// No PID namespace ends what the command left running: its
		// process group does (the init made a session of its own, and
		// the lower rungs' filter refuses setsid and setpgid). Killed
		// before the init is reaped, so that its pid, the group's id,
		// cannot be another's yet.
		unix.Kill(-p.Pid, unix.SIGKILL)
	}
	state, _ := p.Wait()
	close(exited)
	// The init is gone, and with it every process of the jail: what still
	// holds the standard streams' pipes or the sentinel's write end is
	// outside it (a descriptor handed out over a unix socket; a process
	// forked from this one, without exec, while the pipe was open). Do not
	// wait on those for ever.
	grace := req.KillTimeout
	if grace <= 0 {
		grace = exitGrace
	}
	cio.wait(grace)
	rd.SetReadDeadline(time.Now().Add(grace))
	out := degrade.Facts{Rung: req.Spec.Rung, Status: exitStatus(state)}
	if r, ok := proto.DecodeReport(<-report); ok {
		out.Report = &r
	}
	return out
}

// start starts the jail init: its spec on SpecFD, the sentinel's write end
// on ReportFD, the read end of the protection's pipe on ProtectFD, the
// request's standard streams on 0 to 2, and a session's channel, if
// given, on SessionFD. It returns the process, the sentinel's read end,
// the streams' copying, and the protection's write end, for
// sendProtection.
func start(req *Request, session *os.File) (*os.Process, *os.File, *childIO, *os.File, error) {
	if req.Git != nil {
		defer req.Git.Close()
	}
	exe, err := exePath()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	s := req.Spec
	s.ProtectLater, s.Pins, s.Protect = true, nil, nil
	spec, err := specFile(&s)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer spec.Close()
	// /dev/null fills the descriptors below the last one given that are
	// not (a session's HomeFD without a home, say): the child's table
	// has no holes. Opened first: it never fails once the pipes are made.
	var null *os.File
	if session != nil && req.HomeMount == nil || req.Proxy != nil || req.Git != nil {
		if null, err = os.Open(os.DevNull); err != nil {
			return nil, nil, nil, nil, err
		}
		defer null.Close()
	}
	prd, pwr, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer prd.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		pwr.Close()
		return nil, nil, nil, nil, err
	}
	cio, err := newChildIO(req.Stdin, req.Stdout, req.Stderr)
	if err != nil {
		rd.Close()
		wr.Close()
		pwr.Close()
		return nil, nil, nil, nil, err
	}
	// No working directory is set: a chdir refused here would look like a
	// refused clone (mode 1); the init's own chdir step reports it as a
	// path step.
	at := map[int]*os.File{proto.ReportFD: wr, proto.SpecFD: spec, proto.ProtectFD: prd}
	if req.HomeMount != nil {
		at[proto.HomeFD], at[proto.HomeLockFD] = req.HomeMount, req.HomeLock
	}
	if req.Proxy != nil {
		at[proto.ProxyFD] = req.Proxy
	}
	if session != nil {
		at[proto.SessionFD] = session
	}
	if req.Git != nil {
		at[proto.GitFD] = req.Git
	}
	if null != nil {
		for fd := proto.ReportFD; fd < proto.GitFD; fd++ {
			if at[fd] == nil {
				at[fd] = null
			}
		}
	}
	files, err := childFiles(cio.child, at)
	if err != nil {
		wr.Close()
		rd.Close()
		pwr.Close()
		cio.closeChildEnds()
		cio.closeParentEnds()
		return nil, nil, nil, nil, err
	}
	pid, err := spawn(exe, []string{proto.InitArg0}, []string{}, rungAttr(req.Spec.Rung, req.Spec.HostNetwork, files...))
	// The read end sees EOF only once every write end is closed: ours must
	// go now, or a silent child would hang the read of the sentinel.
	wr.Close()
	cio.closeChildEnds()
	if err != nil {
		rd.Close()
		pwr.Close()
		cio.closeParentEnds()
		return nil, nil, nil, nil, err
	}
	p, err := os.FindProcess(pid) // a pidfd, where the kernel has them
	if err != nil {
		unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
		rd.Close()
		pwr.Close()
		cio.closeParentEnds()
		return nil, nil, nil, nil, err
	}
	return p, rd, cio, pwr, nil
}

// sendProtection finds the request's protection (while the init starts)
// and sends it on w, or word that there is none, and closes w. An init
// that failed before it reads gives EPIPE, which is nothing to report: its
// sentinel says what failed.
func sendProtection(ctx context.Context, w *os.File, req *Request) {
	defer w.Close()
	var b []byte
	var err error
	if req.Protection != nil {
		b, err = req.Protection()
	} else {
		b, err = proto.EncodeProtection(req.Spec.Pins, req.Spec.Protect)
	}
	if err != nil || ctx.Err() != nil {
		// A command cancelled while its protection was found does not
		// start: as before the init was started first.
		w.Write(proto.AbortProtection())
		return
	}
	w.Write(b)
}

// stopOnCancel stops the jail when ctx is done before it exits. A started
// target gets SIGTERM, forwarded by the init, and SIGKILL killTimeout
// later. The init takes SIGTERM only once its target has started (before
// its handlers exist, PID 1 does not get a signal at all), and only the
// sentinel says when: a cancel during the setup waits for it, at most
// killTimeout. A jail that failed, or is stuck in its setup, gets SIGKILL.
func stopOnCancel(ctx context.Context, p *os.Process, started *atomic.Bool, setupOver <-chan struct{}, killTimeout time.Duration, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(killTimeout)
	defer t.Stop()
	select {
	case <-exited:
		return
	case <-setupOver:
	case <-t.C:
		p.Kill()
		return
	}
	if !started.Load() {
		p.Kill()
		return
	}
	p.Signal(syscall.SIGTERM)
	t.Reset(killTimeout)
	select {
	case <-exited:
	case <-t.C:
		p.Kill()
	}
}

// A forwarder passes a command's signals on to its jail. On the full
// rung the init is PID 1 of the jail, which passes each on to its
// target's process group; on the lower rungs the init has become the
// target, which leads the process group of its session: the group gets
// it, as from a terminal (the filter keeps every process of the command
// in it).
type forwarder struct {
	p     *os.Process
	group bool
	mu    sync.Mutex
	done  bool // the init is being reaped: its pid may be another's next
}

func (f *forwarder) forward(sigs <-chan syscall.Signal, started *atomic.Bool, setupOver, exited <-chan struct{}) {
	var held []syscall.Signal
	over := setupOver
	for {
		select {
		case <-exited:
			return
		case sig := <-sigs:
			if over != nil {
				held = append(held, sig) // PID 1 takes none before its handlers exist
				continue
			}
			f.send(sig)
		case <-over:
			over = nil
			if !started.Load() {
				return // the setup failed: no target
			}
			for _, sig := range held {
				f.send(sig)
			}
			held = nil
		}
	}
}

func (f *forwarder) send(sig syscall.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	if f.group {
		unix.Kill(-f.p.Pid, sig)
		return
	}
	f.p.Signal(sig)
}

// reaping says the init is about to be reaped: no signal is sent after.
func (f *forwarder) reaping() {
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
}

// startFailed is the facts of a start that failed. An EPERM or EACCES is
// checked: whether a plain clone with the same namespaces and id maps is
// allowed (if it is, the refusal was not the namespaces').
func startFailed(err error, rung degrade.Rung, hostNetwork bool) degrade.Facts {
	out := degrade.Facts{Rung: rung, StartErr: err}
	var se *SpawnError
	if errors.As(err, &se) {
		out.StartStep = se.Step
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		out.Filtered = underSeccompFilter()
		if rung == degrade.RungFull {
			out.NamespacesAllowed = namespacesAllowed(hostNetwork)
		}
	}
	return out
}

// underSeccompFilter reports whether this process runs under a seccomp
// filter: its /proc/self/status says "Seccomp: 2" (SECCOMP_MODE_FILTER).
func underSeccompFilter() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}

// waitExited waits until the child pid has exited, without reaping it.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}

// readSentinel reads what the jail init wrote, up to EOF. EOF with nothing
// written means the setup is over and the target started (or the init died
// without a word): then started is called, while the target may still run.
func readSentinel(rd *os.File, started func()) []byte {
	var buf [proto.ReportSize + 1]byte
	n, _ := io.ReadFull(rd, buf[:])
	if n == 0 && started != nil {
		started()
	}
	return buf[:n]
}

// specFile puts the encoded spec in a memfd, read from the start.
func specFile(s *proto.Spec) (*os.File, error) {
	b, err := s.Encode()
	if err != nil {
		return nil, err
	}
	return memFile(b)
}

// memFile puts b in a memfd, read from the start.
func memFile(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("wsh-spec", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "wsh-spec")
	_, err = f.Write(b)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func exitStatus(state *os.ProcessState) int {
	if state == nil {
		return 126
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok {
		return proto.WaitStatus(ws)
	}
	return state.ExitCode()
}
