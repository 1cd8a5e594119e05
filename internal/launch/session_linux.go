//go:build linux && cgo

package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
	"wsh/internal/sweep"
)

// ErrSessionEnded is a command for a session whose jail had ended: it was
// not sent, and never ran.
var ErrSessionEnded = errors.New("the session's jail has ended")

// ErrSessionLost is a command sent to a session whose jail ended before it
// said whether the command started: it may have run in part.
var ErrSessionLost = errors.New("the session's jail ended as the command was sent")

// A Session is one jail whose init forks every command it is sent
// (proto.Spec.Session): the namespaces, mounts and filter are set up once,
// and each command costs a fork and an exec inside the jail. Its channel
// is a SOCK_SEQPACKET socketpair; wsh's end is close-on-exec, the init's
// is proto.SessionFD, marked close-on-exec by its setup.
type Session struct {
	rung degrade.Rung
	p    *os.Process
	sock *os.File
	fd   int // sock's, taken once: Close closes sock only after read ends

	wmu  sync.Mutex // one message at a time
	mu   sync.Mutex
	id   uint64
	wait map[uint64]chan proto.SessionMsg
	// running are the commands started and not ended, by id: each one's
	// pid, the leader of its process group.
	running map[uint64]int
	end     chan struct{} // closed when the channel has ended
	gone    chan struct{} // closed once the init is reaped

	closeOnce sync.Once
	closeErr  error
}

// closeTimeout is how long Close waits for the init to end by itself.
const closeTimeout = 5 * time.Second

// sweepTimeout bounds wsh's sweep of a lower rung's session, once its
// zygote is gone.
const sweepTimeout = 5 * time.Second

// killGroups kills, once a lower rung's zygote is gone and its messages
// are read, its own process group (where its forks are before they make
// theirs; its number is the zygote's pid, another's only once wsh has
// reaped it) and the group of every command it said it was making
// (MsgGroup, sent before the group exists) or started, and not that it
// ended. Nothing a command starts can leave its group
// (proto.SessionForkGroup), so this ends all of it at once, even a loop
// that forks and exits, which a scan of the session can miss. A command's
// group's number is its leader's pid, which is no other process's while
// any process of the group lives; only a group that ended and whose
// number the kernel gave out again since (after its pids wrapped around)
// would be another's.
func (s *Session) killGroups() {
	<-s.end
	s.mu.Lock()
	defer s.mu.Unlock()
	unix.Kill(-s.p.Pid, unix.SIGKILL)
	for _, pid := range s.running {
		if pid > 1 {
			unix.Kill(-pid, unix.SIGKILL)
		}
	}
}

// awaitExit waits until child pid has exited, without reaping it
// (waitid with WNOWAIT).
func awaitExit(pid int) {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
}

// A Command is one command for a Session.
type Command struct {
	Path   string
	Args   []string
	Env    []string
	Dir    string
	Umask  uint32
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// KillTimeout is how long a cancelled command has after SIGTERM
	// before it is killed, and how long its standard streams' copies may
	// go on after it has exited (0: exitGrace).
	KillTimeout time.Duration
	// Signals, if set, are signals for the command's process group while
	// it runs (an interrupt, as a terminal's Ctrl-C).
	Signals <-chan syscall.Signal
	// Started, if set, is called with the command's pid on the host once
	// the init says it started (on the full rung found from its pid in
	// the jail among the init's children; 0 if it cannot be found).
	Started func(hostPid int)
}

// StartSession starts a session's jail from req (req.Spec.Session set,
// no Path or Args; req's streams are the init's own) and returns it once
// its setup is over. When the jail was not made, it returns nil and the
// facts, for degrade.Classify to judge as any launch's.
func StartSession(ctx context.Context, req *Request) (*Session, degrade.Facts) {
	if err := ctx.Err(); err != nil {
		return nil, degrade.Facts{StartErr: err}
	}
	ours, theirs, err := seqpacketPair()
	if err != nil {
		return nil, degrade.Facts{Rung: req.Spec.Rung, StartErr: err}
	}
	// The init asks for SIGKILL when its parent dies (checkParent), and
	// its parent is the thread that cloned it: one that ended (a
	// goroutine locked to it returned) would end the session. It is
	// started from a thread kept for the session's life.
	type started struct {
		p    *os.Process
		rd   *os.File
		cio  *childIO
		prot *os.File
		err  error
	}
	res := make(chan started, 1)
	gone := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		var st started
		st.p, st.rd, st.cio, st.prot, st.err = start(req, theirs)
		res <- st
		if st.err == nil {
			<-gone
		}
		runtime.UnlockOSThread()
	}()
	st := <-res
	p, rd, cio, prot := st.p, st.rd, st.cio, st.prot
	theirs.Close()
	if st.err != nil {
		ours.Close()
		return nil, startFailed(st.err, req.Spec.Rung, req.Spec.HostNetwork)
	}
	defer rd.Close()
	protSent := make(chan struct{})
	go func() {
		defer close(protSent)
		sendProtection(ctx, prot, req)
	}()
	cio.start()
	b := readSentinel(rd, nil)
	if r, ok := proto.DecodeReport(b); ok || len(b) > 0 {
		// Not made: the init exits with the reserved status.
		ours.Close()
		state, _ := p.Wait()
		close(gone)
		// The protection is found to its end (the init is gone: the
		// write ends) before the caller goes on, as Run does: else
		// what it makes (placeholders) would be made as the next rung's
		// jail is, which would take them for a command's.
		<-protSent
		cio.wait(exitGrace)
		out := degrade.Facts{Rung: req.Spec.Rung, Status: exitStatus(state)}
		if ok {
			out.Report = &r
		}
		return nil, out
	}
	s := &Session{rung: req.Spec.Rung, p: p, sock: ours, fd: int(ours.Fd()), wait: map[uint64]chan proto.SessionMsg{},
		running: map[uint64]int{}, end: make(chan struct{}), gone: gone}
	// A lower rung's zygote ends what its session runs; one that was
	// killed (its commands can signal it) or stalled and killed at Close
	// could not: wsh ends it once it has exited and before it reaps it,
	// whose pid keeps the session id and its group's number from being
	// another's until then.
	go s.read()
	go func() {
		if s.rung != degrade.RungFull {
			awaitExit(p.Pid)
			s.killGroups()
			sweep.Kill(p.Pid, sweepTimeout)
		}
		p.Wait()
		cio.wait(exitGrace)
		close(gone)
	}()
	return s, degrade.Facts{Rung: req.Spec.Rung}
}

// seqpacketPair is a connected SOCK_SEQPACKET pair, both ends close-on-exec.
func seqpacketPair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	return os.NewFile(uintptr(fds[0]), "wsh-session"), os.NewFile(uintptr(fds[1]), "wsh-session-init"), nil
}

// read takes the init's messages and hands each to its command's waiter.
func (s *Session) read() {
	defer func() {
		s.mu.Lock()
		close(s.end)
		s.mu.Unlock()
	}()
	buf := make([]byte, 64)
	flags := 0
	for {
		n, _, _, _, err := unix.Recvmsg(s.fd, buf, nil, flags)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			if flags == 0 {
				// The end (Close's shutdown) can come with a message
				// still queued: the kernel's reader sees the queue
				// empty, then the shutdown, and a sender in between
				// saw no shutdown and queued (the fifth review). What
				// is queued is read, without waiting: a lower rung's
				// zygote takes a sent MsgGroup as read.
				flags = unix.MSG_DONTWAIT
				continue
			}
			return
		}
		m, err := proto.DecodeSessionMsg(buf[:n])
		if err != nil {
			return
		}
		s.mu.Lock()
		ch := s.wait[m.ID]
		switch m.Kind {
		case proto.MsgGroup:
			// A lower rung's command's group, about to be made: noted
			// for killGroups (also for a command whose waiter has
			// given up: its fork may go on), and said to the waiter.
			s.running[m.ID] = int(m.Value)
		case proto.MsgStarted:
			s.running[m.ID] = int(m.Value)
		default:
			delete(s.wait, m.ID)
			delete(s.running, m.ID)
		}
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// Ended says that the session's channel has ended: its jail is gone.
func (s *Session) Ended() bool {
	select {
	case <-s.end:
		return true
	default:
		return false
	}
}

// Run runs c in the session and returns what wsh saw: the command's
// status, or a report of its fork or exec failing (degrade.StepExec, the
// errno), or a StartErr when the session has ended.
func (s *Session) Run(ctx context.Context, c *Command) degrade.Facts {
	if err := ctx.Err(); err != nil {
		return degrade.Facts{Rung: s.rung, StartErr: err}
	}
	cio, err := newChildIO(c.Stdin, c.Stdout, c.Stderr)
	if err != nil {
		return degrade.Facts{Rung: s.rung, StartErr: err}
	}
	ch := make(chan proto.SessionMsg, 3) // Group, Started, and Exited or Failed
	s.mu.Lock()
	select {
	case <-s.end:
		s.mu.Unlock()
		cio.closeChildEnds()
		cio.closeParentEnds()
		return degrade.Facts{Rung: s.rung, StartErr: ErrSessionEnded}
	default:
	}
	s.id++
	id := s.id
	s.wait[id] = ch
	s.mu.Unlock()
	err = s.send(id, c, cio.child)
	cio.closeChildEnds()
	if err != nil {
		s.forget(id)
		cio.closeParentEnds()
		return degrade.Facts{Rung: s.rung, StartErr: err}
	}
	cio.start()
	grace := c.KillTimeout
	if grace <= 0 {
		grace = exitGrace
	}
	out := degrade.Facts{Rung: s.rung}
	status, report, err := s.await(ctx, id, ch, c.KillTimeout, c.Signals, c.Started)
	cio.wait(grace)
	switch {
	case err != nil:
		return degrade.Facts{Rung: s.rung, StartErr: err}
	case report != nil:
		out.Report, out.Status = report, proto.ReservedStatus
	default:
		out.Status = status
	}
	return out
}

// await waits for the end of the command id: its status, or the report
// of its fork or exec failing. A cancelled command's process group gets
// SIGTERM, and SIGKILL killTimeout later (at once with none); a signal
// sent before the init said the command started is sent again once it
// says so. A session that ends before the command started gives
// ErrSessionLost; an init that says nothing for killTimeout (or
// exitGrace) after the SIGKILL, ctx's error.
func (s *Session) await(ctx context.Context, id uint64, ch <-chan proto.SessionMsg, killTimeout time.Duration, sigs <-chan syscall.Signal, onStarted func(int)) (int, *degrade.Report, error) {
	done := ctx.Done()
	var kill, giveUp <-chan time.Time
	// grouped: a lower rung's zygote was making the command's group
	// (MsgGroup), so the command may have run.
	started, grouped := false, false
	var sent, held []syscall.Signal
	send := func(sig syscall.Signal) {
		sent = append(sent, sig)
		s.signal(id, sig)
	}
	wait := killTimeout
	if wait <= 0 {
		wait = exitGrace
	}
	// take takes m; done when it ends the wait, with its status or report.
	take := func(m proto.SessionMsg) (done bool, status int, rep *degrade.Report) {
		switch m.Kind {
		case proto.MsgGroup:
			grouped = true
		case proto.MsgStarted:
			started = true
			if onStarted != nil {
				onStarted(s.hostPid(int(m.Value)))
			}
			for _, sig := range sent {
				s.signal(id, sig)
			}
			for _, sig := range held {
				s.signal(id, sig)
			}
			held = nil
		case proto.MsgFailed:
			return true, 0, &degrade.Report{Step: m.Step, Errno: syscall.Errno(m.Value)}
		case proto.MsgExited:
			return true, int(m.Value), nil
		}
		return false, 0, nil
	}
	for {
		select {
		case m := <-ch:
			if done, status, rep := take(m); done {
				return status, rep, nil
			}
		case <-s.end:
			// The channel's last messages are all in ch by now (read
			// hands each over before it ends): they come first.
			for len(ch) > 0 {
				if done, status, rep := take(<-ch); done {
					return status, rep, nil
				}
			}
			if !started && !grouped {
				return 0, nil, ErrSessionLost
			}
			// The session's end killed the command: said once every
			// process of it is gone, not while it may still run.
			select {
			case <-s.gone:
			case <-time.After(closeTimeout + sweepTimeout):
			}
			return proto.SignalStatus(syscall.SIGKILL), nil, nil
		case sig := <-sigs:
			if !started {
				// The init knows the command's group once it said so.
				held = append(held, sig)
				continue
			}
			s.signal(id, sig)
		case <-done:
			done = nil
			if killTimeout <= 0 {
				send(syscall.SIGKILL)
			} else {
				send(syscall.SIGTERM)
				t := time.NewTimer(killTimeout)
				defer t.Stop()
				kill = t.C
			}
			if killTimeout <= 0 {
				g := time.NewTimer(wait)
				defer g.Stop()
				giveUp = g.C
			}
		case <-kill:
			kill = nil
			send(syscall.SIGKILL)
			g := time.NewTimer(wait)
			defer g.Stop()
			giveUp = g.C
		case <-giveUp:
			// The init does not answer (a fork it waits on): the
			// cancelled command is left to the session's end.
			s.forget(id)
			return 0, nil, ctx.Err()
		}
	}
}

// send sends the Run of id: its SessionRun in a memfd, and the streams.
func (s *Session) send(id uint64, c *Command, stdio [3]*os.File) error {
	r := proto.SessionRun{ID: id, Umask: c.Umask, Dir: c.Dir, Path: c.Path, Args: c.Args, Env: c.Env}
	b, err := r.Encode()
	if err != nil {
		return err
	}
	mf, err := memFile(b)
	if err != nil {
		return err
	}
	defer mf.Close()
	rights := unix.UnixRights(int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()), int(mf.Fd()))
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return os.NewSyscallError("sendmsg", unix.Sendmsg(s.fd, proto.SessionMsg{Kind: proto.MsgRun, ID: id}.Encode(), rights, nil, unix.MSG_NOSIGNAL))
}

// signal sends sig to the process group of the command id.
func (s *Session) signal(id uint64, sig syscall.Signal) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	unix.Sendmsg(s.fd, proto.SessionMsg{Kind: proto.MsgSignal, ID: id, Value: uint32(sig)}.Encode(), nil, nil, unix.MSG_NOSIGNAL)
}

func (s *Session) forget(id uint64) {
	s.mu.Lock()
	delete(s.wait, id)
	s.mu.Unlock()
}

// Close ends the session: the init kills and reaps every process of the
// jail, and Close returns once it is gone.
func (s *Session) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Session) close() error {
	// Not under wmu: a send blocked on a full socket (an init that does
	// not read) holds it; the shutdown is what ends that send (EPIPE).
	// The descriptor stays open until the end, so it is still the
	// socket's.
	err := unix.Shutdown(s.fd, unix.SHUT_RDWR)
	if s.rung != degrade.RungFull {
		// A lower rung's zygote is in reach of its commands' signals
		// (its own Landlock domain): one may have stopped it. It is to
		// end them itself, as it reads the channel's end.
		s.p.Signal(syscall.SIGCONT)
	}
	select {
	case <-s.gone:
	case <-time.After(closeTimeout):
		// The init does not end (stalled in a fork a command holds up):
		// SIGKILL to a PID 1 ends its whole namespace. Its home lock may
		// then be let go before the last process is gone, which the
		// init's own end avoids; this is for an init that cannot end.
		// A lower rung's zygote has no namespace: what it forked and
		// did not end is left (docs/sandbox.md).
		s.p.Kill()
		<-s.gone
	}
	<-s.end
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if cerr := s.sock.Close(); err == nil {
		err = cerr
	}
	return err
}

// hostPid is the host's pid of the session's process pid: the same on a
// lower rung (no PID namespace); on the full rung the init's child whose
// pid in the jail (the last of NSpid) is pid, or 0.
func (s *Session) hostPid(pid int) int {
	if s.rung != degrade.RungFull {
		return pid
	}
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(s.p.Pid) + "/task")
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(s.p.Pid) + "/task/" + t.Name() + "/children")
		for _, c := range strings.Fields(string(b)) {
			st, err := os.ReadFile("/proc/" + c + "/status")
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(st), "\n") {
				if v, ok := strings.CutPrefix(l, "NSpid:"); ok {
					f := strings.Fields(v)
					if len(f) > 0 && f[len(f)-1] == strconv.Itoa(pid) {
						h, _ := strconv.Atoi(c)
						return h
					}
				}
			}
		}
	}
	return 0
}
