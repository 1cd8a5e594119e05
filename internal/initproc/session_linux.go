package initproc

import (
	"os"
	"sync"
	"syscall"

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
	fd  int
	wmu sync.Mutex // one message at a time on fd

	mu     sync.Mutex // held from a fork until its pid is recorded
	byID   map[uint64]int
	ids    map[int]uint64
	forked chan struct{} // a fork since reap last found no child
}

// serve runs the session until wsh closes its end of the channel (or
// dies, which closes it): then every process of the jail is killed and
// reaped. A signal forwarded to the init (from outside the jail: inside,
// a command cannot signal its PID 1) ends the session the same way.
func serve(sigs <-chan os.Signal) int {
	s := &server{fd: proto.SessionFD, byID: map[uint64]int{}, ids: map[int]uint64{}, forked: make(chan struct{}, 1)}
	unix.Close(proto.ReportFD) // the setup is over: wsh reads EOF, the session is ready
	go func() {
		<-sigs
		// A close would not wake the recvmsg blocked on fd; a shutdown does.
		unix.Shutdown(s.fd, unix.SHUT_RDWR)
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
// to fds[2] as its standard streams.
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
		s.send(proto.SessionMsg{Kind: proto.MsgFailed, ID: id, Value: uint32(unix.EINVAL)})
		return
	}
	s.mu.Lock()
	old := syscall.Umask(int(r.Umask & 0o777))
	pid, err := syscall.ForkExec(r.Path, r.Args, &syscall.ProcAttr{
		Dir:   r.Dir,
		Env:   r.Env,
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	syscall.Umask(old)
	if err != nil {
		s.mu.Unlock()
		errno, _ := err.(syscall.Errno)
		if errno == 0 {
			errno = unix.EIO
		}
		s.send(proto.SessionMsg{Kind: proto.MsgFailed, ID: id, Value: uint32(errno)})
		return
	}
	s.byID[id], s.ids[pid] = pid, id
	// Started goes before the reaper can send Exited, which waits for mu.
	s.send(proto.SessionMsg{Kind: proto.MsgStarted, ID: id, Value: uint32(pid)})
	s.mu.Unlock()
	select {
	case s.forked <- struct{}{}:
	default:
	}
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
