package initproc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// A server is the init of a session: PID 1 of the jail, set up once,
// forking each command wsh sends on proto.SessionFD inside the jail. Every
// command inherits the init's confinement (the setup dropped its
// capabilities, set no_new_privs and loaded the filter on the thread that
// forks), runs in a process group of its own, and is reaped here, with
// whatever it left behind.
type server struct {
	st  *setupState // what the setup left: the streams are reopened with it
	fd  int
	wmu sync.Mutex // one message at a time on fd

	mu     sync.Mutex // held from a fork until its pid is recorded
	byID   map[uint64]int
	ids    map[int]uint64
	forked chan struct{} // a fork since reap last found no child
}

// serve runs the session until wsh closes its end of the channel (or
// dies, which closes it): then every process of the jail is killed and
// reaped. A signal sent to the init from outside the jail (inside, a
// command cannot signal its PID 1) is passed on to every command running,
// as a command's own init passes it on to its target.
func serve(st *setupState, sigs <-chan os.Signal) int {
	s := &server{st: st, fd: proto.SessionFD, byID: map[uint64]int{}, ids: map[int]uint64{}, forked: make(chan struct{}, 1)}
	unix.Close(proto.ReportFD) // the setup is over: wsh reads EOF, the session is ready
	go func() {
		for sig := range sigs {
			s.mu.Lock()
			for _, pid := range s.byID {
				unix.Kill(-pid, sig.(syscall.Signal))
			}
			s.mu.Unlock()
		}
	}()
	go s.reap()
	s.loop()
	unix.Kill(-1, unix.SIGKILL)
	reapAll()
	return 0
}

// loop takes messages until the channel ends. A Run carries four
// descriptors: the command's standard streams and a memfd holding the
// SessionRun (a command's argv and environment can be megabytes, more
// than one datagram of the socket holds).
func (s *server) loop() {
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(s.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return // wsh closed its end
		}
		fds := rights(oob[:oobn])
		m, err := proto.DecodeSessionMsg(buf[:n])
		if err != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			closeAll(fds)
			return // not a message wsh sends: end the session
		}
		switch m.Kind {
		case proto.MsgRun:
			s.run(m.ID, fds)
		case proto.MsgSignal:
			closeAll(fds)
			s.signal(m)
		default:
			closeAll(fds)
			return
		}
	}
}

// run forks the command of id, from the SessionRun in fds[3], with fds[0]
// to fds[2] as its standard streams. Each stream is shown to the command
// as the jail shows it (reopenStdio, as a command's own jail does); its
// working directory is checked first, so that a missing one is said as
// the chdir step, not as the exec.
func (s *server) run(id uint64, fds []int) {
	defer closeAll(fds)
	var r *proto.SessionRun
	err := error(unix.EINVAL)
	if len(fds) == 4 {
		r, err = readRun(fds[3])
	}
	if err == nil && r.ID != id {
		err = unix.EINVAL
	}
	if err != nil {
		s.failed(id, proto.StepExec, unix.EINVAL)
		return
	}
	if err := checkDir(r.Dir); err != nil {
		s.failed(id, proto.StepChdir, err)
		return
	}
	var stdio [3]uintptr
	for i := range stdio {
		nfd, err := s.st.reopened(fds[i])
		if err != nil {
			s.failed(id, proto.StepStdio, err)
			return
		}
		if nfd != fds[i] {
			fds = append(fds, nfd) // closed with the others
		}
		stdio[i] = uintptr(nfd)
	}
	s.mu.Lock()
	old := syscall.Umask(int(r.Umask & 0o777))
	pidfd := -1
	pid, err := syscall.ForkExec(r.Path, r.Args, &syscall.ProcAttr{
		Dir:   r.Dir,
		Env:   r.Env,
		Files: stdio[:],
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	syscall.Umask(old)
	if err != nil {
		s.mu.Unlock()
		s.failed(id, proto.StepExec, err)
		return
	}
	s.byID[id], s.ids[pid] = pid, id
	// Started goes before the reaper can send Exited, which waits for mu.
	s.send(proto.SessionMsg{Kind: proto.MsgStarted, ID: id, Value: uint32(pid)})
	s.mu.Unlock()
	if pidfd >= 0 {
		go s.untrace(id, pid, pidfd)
	}
	select {
	case s.forked <- struct{}{}:
	default:
	}
}

// failed says that the command id never ran: step failed with err.
func (s *server) failed(id uint64, step proto.Step, err error) {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = unix.EIO
	}
	s.send(proto.SessionMsg{Kind: proto.MsgFailed, ID: id, Step: step, Value: uint32(errno)})
}

// checkDir checks that dir is a directory the command can enter.
func checkDir(dir string) error {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	return unix.Access(dir, unix.X_OK)
}

// untrace frees the exit of the command id from a tracer. A process of
// the jail that ptraces the command is told of its exit first, and until
// it waits for it the command is a zombie that the reaper cannot reap: the
// command would never end for wsh. Its pidfd is readable as soon as it
// has exited, traced or not; if it is not reaped soon after, its tracer
// (TracerPid, while there is one) is killed, which hands the exit to the
// reaper. Nothing else of the session is touched.
func (s *server) untrace(id uint64, pid, pidfd int) {
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if _, err := retryEINTR(func() (int, error) { return unix.Poll(fds, -1) }); err != nil {
		return
	}
	for {
		time.Sleep(20 * time.Millisecond)
		s.mu.Lock()
		_, running := s.ids[pid]
		s.mu.Unlock()
		if !running {
			return
		}
		if t := tracerOf(pid); t > 0 {
			unix.Kill(t, unix.SIGKILL)
		}
	}
}

// tracerOf is the TracerPid of pid, 0 when it has none (or is gone).
func tracerOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(b), "\nTracerPid:\t")
	if !ok {
		return 0
	}
	line, _, _ := strings.Cut(rest, "\n")
	t, _ := strconv.Atoi(line)
	return t
}

// readRun reads a SessionRun from the memfd fd.
func readRun(fd int) (*proto.SessionRun, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size <= 0 || st.Size > proto.MaxSessionRun {
		return nil, unix.EINVAL
	}
	b := make([]byte, st.Size)
	for off := 0; off < len(b); {
		n, err := unix.Pread(fd, b[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, unix.EINVAL
		}
		off += n
	}
	return proto.DecodeSessionRun(b)
}

// signal sends m's signal to the process group of the command m names, if
// it still runs.
func (s *server) signal(m proto.SessionMsg) {
	s.mu.Lock()
	pid, ok := s.byID[m.ID]
	s.mu.Unlock()
	if ok && m.Value > 0 && m.Value < 65 {
		unix.Kill(-pid, syscall.Signal(m.Value))
	}
}

// reap waits for every process of the jail: a command's exit is sent to
// wsh; an orphan reparented to PID 1 is only reaped.
func (s *server) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// No child (ECHILD comes back at once): wait for the next
			// fork rather than spin.
			<-s.forked
			continue
		}
		s.mu.Lock()
		id, ok := s.ids[pid]
		if ok {
			delete(s.ids, pid)
			delete(s.byID, id)
		}
		s.mu.Unlock()
		if ok {
			s.send(proto.SessionMsg{Kind: proto.MsgExited, ID: id, Value: uint32(proto.WaitStatus(syscall.WaitStatus(ws)))})
		}
	}
}

func (s *server) send(m proto.SessionMsg) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	unix.Sendmsg(s.fd, m.Encode(), nil, nil, 0)
}

// rights returns the descriptors an SCM_RIGHTS message carried.
func rights(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
