package sessioninit

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/initsys"
	"wsh/internal/proto"
)

// A Jail is what a session's init asks of the setup of its jail (nil on
// a rung without namespaces, which has neither).
type Jail interface {
	// Reopened is the descriptor a command is to get for the stream fd,
	// as the jail shows it: fd itself, or a new one for the caller to
	// close.
	Reopened(fd int) (int, error)
	// Protect binds pins and paths read-only in the live jail, on the
	// protector's thread.
	Protect(pins, paths []proto.PathID) error
}

// ErrNoProtector is a Protect sent to an init that has no protector (a
// lower rung's zygote).
var ErrNoProtector = errors.New("protect: no protector in this init")

// A server is the init of a session: PID 1 of the jail, set up once,
// forking each command wsh sends on proto.SessionFD inside the jail. Every
// command inherits the init's confinement (the setup dropped its
// capabilities, set no_new_privs and loaded the filter on the thread that
// forks), runs in a process group of its own, and is reaped here, with
// whatever it left behind.
type server struct {
	jail Jail // what the setup left: the streams are reopened with it
	fd   int
	// lower: a zygote of a rung without namespaces (serveLower), in the
	// host's PID namespace, the subreaper of what its commands leave.
	lower bool
	// forking is set while the fork thread forks a command (run): the
	// zygote lets its child make its group then only (mayJoin); forkID
	// is the command's id.
	forking atomic.Int32
	forkID  atomic.Uint64
	wmu     sync.Mutex // one message at a time on fd

	mu     sync.Mutex // held from a fork until its pid is recorded
	byID   map[uint64]int
	ids    map[int]uint64
	forked chan struct{} // a fork since reap last found no child
}

// Serve runs the session until wsh closes its end of the channel (or
// dies, which closes it): then every process of the jail is killed and
// reaped. A signal the init takes (SIGINT, SIGTERM, SIGHUP, SIGQUIT: from
// the host, or from a command, since PID 1 has handlers for them) is
// passed on to every command running, as a command's own init passes it
// on to its target; a command gains nothing by it that kill(-1) does not
// give it.
func Serve(jail Jail, sigs <-chan os.Signal) int {
	s := newServer(jail, false)
	s.serve(sigs)
	unix.Kill(-1, unix.SIGKILL)
	initsys.ReapAll()
	return 0
}

func newServer(jail Jail, lower bool) *server {
	return &server{jail: jail, fd: proto.SessionFD, lower: lower, byID: map[uint64]int{}, ids: map[int]uint64{}, forked: make(chan struct{}, 1)}
}

// serve takes commands until wsh closes its end of the channel.
func (s *server) serve(sigs <-chan os.Signal) {
	// A fork holds its thread and its P until the child has exec'd (Go
	// forks with vfork), and a command can make that last (watchFork).
	// The watchdog's timer needs another P, and a stop-the-world waits
	// for every P: with one (a host with one CPU, or a CPU quota, sets
	// GOMAXPROCS to 1) or in a GC, the stalled fork would stall all of
	// PID 1. So there are P to spare, and no GC starts by itself: the loop
	// runs one between forks (gcEvery).
	if runtime.GOMAXPROCS(0) < 4 {
		runtime.GOMAXPROCS(4)
	}
	debug.SetGCPercent(-1)
	// The home is mounted: its descriptor is no longer needed (its lock,
	// HomeLockFD, is held for the init's life).
	unix.Close(proto.HomeFD)
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
}

// loop takes messages until the channel ends. A Run carries four
// descriptors: the command's standard streams and a memfd holding the
// SessionRun (a command's argv and environment can be megabytes, more
// than one datagram of the socket holds).
func (s *server) loop() {
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for count := 1; ; count++ {
		if count%gcEvery == 0 {
			runtime.GC() // no fork is under way: serve turned the GC off
		}
		n, oobn, flags, _, err := unix.Recvmsg(s.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return // wsh closed its end
		}
		fds := proto.Rights(oob[:oobn])
		m, err := proto.DecodeSessionMsg(buf[:n])
		if err != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			initsys.CloseAll(fds)
			return // not a message wsh sends: end the session
		}
		switch m.Kind {
		case proto.MsgRun:
			s.run(m.ID, fds)
		case proto.MsgSignal:
			initsys.CloseAll(fds)
			s.signal(m)
		case proto.MsgProtect:
			s.protect(m.ID, fds)
		default:
			initsys.CloseAll(fds)
			return
		}
	}
}

// run forks the command of id, from the SessionRun in fds[3], with fds[0]
// to fds[2] as its standard streams. Each stream is shown to the command
// as the jail shows it (reopenStdio, as a command's own jail does), and
// the descriptors wsh sent (the shell's view, the host's mounts) are
// closed before the fork: the child, until its exec, resolves its paths
// with the init's descriptor table, and through a magic link
// (/proc/self/fd/N) one of those would lead out of the jail's view. The
// working directory is entered as the chdir step of a jail's own setup
// does (no magic link: here no symlink at all), by the init itself, and
// the child inherits it.
func (s *server) run(id uint64, fds []int) {
	defer func() { initsys.CloseAll(fds) }()
	var r *proto.SessionRun
	err := error(unix.EINVAL)
	if len(fds) == 4 {
		r, err = readRun(fds[3])
		unix.Close(fds[3])
		fds = fds[:3]
	}
	if err == nil && r.ID != id {
		err = unix.EINVAL
	}
	if err != nil {
		s.failed(id, degrade.StepExec, unix.EINVAL)
		return
	}
	var stdio [3]uintptr
	for i := range stdio {
		if s.lower {
			// No view of the jail's own: the streams are what wsh
			// gave, as a lower rung's command of its own gets them.
			stdio[i] = uintptr(fds[i])
			continue
		}
		nfd, err := s.jail.Reopened(fds[i])
		if err != nil {
			s.failed(id, degrade.StepStdio, err)
			return
		}
		if nfd != fds[i] {
			unix.Close(fds[i])
			fds[i] = nfd
		}
		stdio[i] = uintptr(nfd)
	}
	dir, err := s.openDir(r.Dir)
	if err != nil {
		s.failed(id, degrade.StepChdir, err)
		return
	}
	defer unix.Close(dir)
	s.mu.Lock()
	if err := unix.Fchdir(dir); err != nil {
		s.mu.Unlock()
		s.failed(id, degrade.StepChdir, err)
		return
	}
	old := syscall.Umask(int(r.Umask & 0o777))
	pidfd := -1
	stop := s.watchFork()
	s.forkID.Store(id)
	s.forking.Add(1)
	pid, err := syscall.ForkExec(r.Path, r.Args, &syscall.ProcAttr{
		Env:   r.Env,
		Files: stdio[:],
		Sys:   &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	s.forking.Add(-1)
	stop()
	syscall.Umask(old)
	if err != nil {
		s.mu.Unlock()
		s.failed(id, degrade.StepExec, err)
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

// protect binds read-only in the jail the protected paths in the memfd
// fds[0] (proto.EncodeProtection's pins and paths), on the protector's
// thread, and answers Protected, or Failed with StepProtect and the errno.
func (s *server) protect(id uint64, fds []int) {
	defer initsys.CloseAll(fds)
	var pins, paths []proto.PathID
	err := error(unix.EINVAL)
	if len(fds) == 1 {
		var b []byte
		var aborted bool
		if b, err = readMemfd(fds[0]); err == nil {
			pins, paths, aborted, err = proto.ReadProtection(bytes.NewReader(b))
		}
		if err == nil && aborted {
			err = unix.EINVAL
		}
	}
	if err == nil && s.jail == nil {
		err = ErrNoProtector
	}
	if err == nil {
		err = s.jail.Protect(pins, paths)
	}
	if err != nil {
		s.failed(id, degrade.StepProtect, err)
		return
	}
	s.send(proto.SessionMsg{Kind: proto.MsgProtected, ID: id})
}

// openDir opens the command's working directory. In the jail no symlink
// is followed (wsh sends the directory resolved as the jail shows it), so
// no magic link either; openat2 is the filter's ENOSYS by now. A lower
// rung has no view of its own to leave: the directory is opened as the
// init's own chdir step opens it, less openat2.
func (s *server) openDir(dir string) (int, error) {
	if s.lower {
		return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	return initsys.OpenNoSymlinks(dir, unix.O_PATH|unix.O_DIRECTORY)
}

// gcEvery is how many messages the loop takes between two collections.
const gcEvery = 256

// forkTimeout bounds the time from a command's fork to its exec.
const forkTimeout = 5 * time.Second

// watchFork guards the fork that the calling thread, holding mu, is about
// to make. Go forks with vfork: this thread waits until the child has
// exec'd. The commands of a session share its PID namespace and its uid,
// so one of them can stop the child (SIGSTOP) before its exec, or make
// the exec wait (a lease on the file), and so stall the init for every
// command and for its own end. After forkTimeout the child, a child of
// this thread that is no command yet, is killed: the fork returns, and the
// command's status is SIGKILL's. stop ends the watch. (Called with mu held:
// s.ids is not read here.)
func (s *server) watchFork() (stop func()) {
	tid := unix.Gettid()
	// The orphans of the jail are this process's children too (and, when
	// this is the main thread, this thread's): only a child that was not
	// there before and that still bears the init's name (a vfork child
	// before its exec; its exe link is not readable: it shares the init's
	// memory, which is not dumpable) is the one. A process of the jail
	// that names itself so only gets itself killed.
	before := map[int]bool{}
	for _, pid := range threadChildren(tid) {
		before[pid] = true
	}
	self, _ := os.ReadFile("/proc/self/comm")
	var done atomic.Bool
	t := time.AfterFunc(forkTimeout, func() {
		for _, pid := range threadChildren(tid) {
			if before[pid] || done.Load() {
				continue
			}
			if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil && len(self) > 0 && string(comm) == string(self) {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
	})
	return func() {
		done.Store(true)
		t.Stop()
	}
}

// threadChildren are the children of thread tid of this process.
func threadChildren(tid int) []int {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// failed says that the command id never ran: step failed with err.
func (s *server) failed(id uint64, step degrade.Step, err error) {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = unix.EIO
	}
	s.send(proto.SessionMsg{Kind: proto.MsgFailed, ID: id, Step: step, Value: uint32(errno)})
}

// killOrphans kills, when a command has exited, every process of the
// jail that descends from no command still running: what a command left
// behind (a job of a shell that has exited, a daemon that forked twice
// and called setsid), which the kernel has made PID 1's child, ends when
// the command does, as in a jail of its own. A process left behind would
// keep the jail's view after a repository or a hidden path appeared,
// which the next command's check would find only then. What a running
// command started (a server's workers, a shell's jobs in groups of their
// own) keeps its parent, and is left alone; no process can choose its
// parent. A process forked while the scan runs is found by another pass.
// Called with mu held.
func (s *server) killOrphans() {
	if s.lower {
		// Nothing a command starts leaves its group (SessionForkGroup),
		// which reap has killed.
		return
	}
	for pass := 0; pass < 10; pass++ {
		if s.killOrphansOnce() == 0 {
			return
		}
	}
}

func (s *server) killOrphansOnce() (killed int) {
	running := make(map[int]bool, len(s.byID))
	for _, pid := range s.byID {
		running[pid] = true
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != 1 {
			if ppid, state, ok := parentOf(pid); ok && state != "Z" && state != "X" {
				parent[pid] = ppid // a zombie is dead already: the reaper waits for it
			}
		}
	}
	for pid := range parent {
		owned := false
		for p, n := pid, 0; n < len(parent)+1; n++ {
			if running[p] {
				owned = true
				break
			}
			next, ok := parent[p]
			if !ok {
				// Its parent is a zombie or gone: it is being made
				// PID 1's child.
				break
			}
			if next <= 1 {
				break
			}
			p = next
		}
		if !owned {
			unix.Kill(pid, unix.SIGKILL)
			killed++
		}
	}
	return killed
}

// parentOf is the parent and the state of pid (proc(5), /proc/PID/stat
// fields 4 and 3), false when it is gone.
func parentOf(pid int) (int, string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, f[0], err == nil
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
	if _, err := initsys.RetryEINTR(func() (int, error) { return unix.Poll(fds, -1) }); err != nil {
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
	b, err := readMemfd(fd)
	if err != nil {
		return nil, err
	}
	return proto.DecodeSessionRun(b)
}

// readMemfd reads the whole of the memfd fd, of at most
// proto.MaxSessionRun bytes, from its start (pread: wsh's write left the
// shared offset at its end).
func readMemfd(fd int) ([]byte, error) {
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
	return b, nil
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
		pid, err := s.exited()
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
		if ok && s.lower {
			// Its process group, at once, as a lower rung's jail per
			// command ends it, while its pid, not reaped yet, cannot
			// be another's: all the command started, which cannot
			// leave the group.
			unix.Kill(-pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != unix.EINTR {
				break
			}
		}
		if ok {
			delete(s.ids, pid)
			delete(s.byID, id)
			s.killOrphans()
		}
		s.mu.Unlock()
		if ok {
			s.send(proto.SessionMsg{Kind: proto.MsgExited, ID: id, Value: uint32(proto.WaitStatus(syscall.WaitStatus(ws)))})
		}
	}
}

// exited waits until a child has exited, and returns its pid without
// reaping it (waitid with WNOWAIT): the caller reaps it.
func (s *server) exited() (int, error) {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT|unix.WALL, nil); err != nil {
		return 0, err
	}
	return siginfoPid(&info), nil
}

// send sends m to wsh. An error (EPIPE: wsh has closed its end, or is
// gone) means wsh will never read it.
func (s *server) send(m proto.SessionMsg) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for {
		err := unix.Sendmsg(s.fd, m.Encode(), nil, nil, 0)
		if err != unix.EINTR {
			return err
		}
	}
}
