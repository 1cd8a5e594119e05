package sessioninit

import (
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/initsys"
	"wsh/internal/proto"
	"wsh/internal/sweep"
)

// A lower rung's session (Spec.Session on the landlock or seccomp rung):
// the init runs the rung's setup on its main thread, then execs itself as
// the zygote (ZygoteArg0), which forks every command of the session.
// Landlock's domain and the capabilities are a thread's own, and the Go
// runtime's other threads were made before the setup: the exec leaves one
// thread, the confined one, from which every thread of the zygote is
// made. Its commands inherit all of it.
//
// Each command runs in a process group of its own, which neither it nor
// anything it starts can leave, as with an init per command: the filter
// (proto.SessionForkGroup) sends setsid and setpgid to the zygote, which
// lets through only setpgid(0, 0) from the child it is forking, before
// that child's exec (answer). So the group kill at a command's end (reap)
// ends all it left, fork by fork, as a lower rung's jail per command does.
//
// The zygote leads a session of its own (the launch's setsid), which
// no command can leave either: every process of it is the zygote's or a
// command's, whatever became of its parent (package sweep).

// ExecZygote execs the zygote, keeping the channel, the sentinel and the
// filter's listener, whose number is the zygote's argument.
func ExecZygote(listener int) int {
	for _, fd := range []int{proto.SessionFD, proto.ReportFD, listener} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			initsys.WriteReport(degrade.StepExec, os.NewSyscallError("fcntl", err))
			return proto.ReservedStatus
		}
	}
	err := unix.Exec("/proc/self/exe", []string{proto.ZygoteArg0, strconv.Itoa(listener)}, []string{})
	initsys.WriteReport(degrade.StepExec, err)
	return proto.ReservedStatus
}

// ZygoteMain serves a lower rung's session. It is non-dumpable (the exec
// made it dumpable again), so that no command, of its uid, can open its
// channel through /proc, take it with pidfd_getfd or read its memory; it
// is the subreaper of its commands, so that what a command leaves becomes
// its child; and it has no parent-death signal: wsh's death ends it
// through the channel's end, after it has killed every process of the
// session.
//
// It forks from a thread that is not its main one: the kernel gives what
// a command leaves to the subreaper's first live thread, the main one,
// so the fork thread's children are the zygote's forks, and the commands'
// own clone(CLONE_PARENT) children, which the filter refuses (answer).
func ZygoteMain() int {
	runtime.LockOSThread() // the main thread's, for good: no fork runs on it
	for _, opt := range [][2]uintptr{{unix.PR_SET_DUMPABLE, 0}, {unix.PR_SET_CHILD_SUBREAPER, 1}, {unix.PR_SET_PDEATHSIG, 0}} {
		if err := unix.Prctl(int(opt[0]), opt[1], 0, 0, 0); err != nil {
			initsys.WriteReport(degrade.StepExec, os.NewSyscallError("prctl", err))
			return proto.ReservedStatus
		}
	}
	listener := -1
	if len(os.Args) == 2 {
		listener, _ = strconv.Atoi(os.Args[1])
	}
	var st unix.Stat_t
	if listener < 3 || unix.Fstat(listener, &st) != nil {
		initsys.WriteReport(degrade.StepListener, unix.EBADF)
		return proto.ReservedStatus
	}
	for _, fd := range []int{proto.SessionFD, proto.ReportFD, listener} {
		unix.CloseOnExec(fd)
	}
	if unix.Gettid() != unix.Getpid() {
		initsys.WriteReport(degrade.StepExec, unix.EDEADLK) // bug: main runs on the main thread
		return proto.ReservedStatus
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, initsys.ForwardedSignals()...)
	signal.Notify(make(chan os.Signal, 1), initsys.DroppedSignals...)
	s := newServer(nil, true)
	forkTid := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // forks from this thread alone, for good
		tid := unix.Gettid()
		forkTid <- tid
		if tid == unix.Getpid() {
			return
		}
		s.serve(sigs)
	}()
	tid := <-forkTid
	if tid == unix.Getpid() {
		initsys.WriteReport(degrade.StepExec, unix.EDEADLK) // bug: the main thread is locked
		return proto.ReservedStatus
	}
	go s.answer(listener, tid)
	<-done
	s.endLower()
	return 0
}

// endGrace bounds the zygote's last sweep; wsh sweeps the session too
// once the zygote is gone.
const endGrace = 2 * time.Second

// endLower kills every process of the session: each running command's
// group, then what a scan of the session finds.
func (s *server) endLower() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range s.byID {
		unix.Kill(-pid, unix.SIGKILL) // not reaped yet: the group is the command's
	}
	sweep.Kill(os.Getpid(), endGrace)
}

// answer answers the filter's setsid and setpgid calls until the
// listener fails (the zygote is ending). Every call is refused with
// EPERM but the fork's own (mayJoin): that one goes on as made.
func (s *server) answer(listener, forkTid int) {
	for {
		var req proto.SeccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // ENOENT: the caller was gone before it was read
			}
			return
		}
		resp := proto.SeccompNotifResp{ID: req.ID, Error: -int32(unix.EPERM)}
		// wsh hears of the group before it exists: a zygote stopped and
		// killed by a command from now on (they share its Landlock
		// domain) leaves no group wsh does not kill (launch's
		// killGroups). A message wsh will not read (it has closed its
		// end: a Run it had sent before is forked after) refuses the
		// group, and the fork fails. Killed before the answer, the
		// zygote leaves the call refused (ENOSYS), and the fork fails.
		if s.mayJoin(listener, forkTid, &req) &&
			s.send(proto.SessionMsg{Kind: proto.MsgGroup, ID: s.forkID.Load(), Value: req.Pid}) == nil {
			resp = proto.SeccompNotifResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		}
		// ENOENT: the caller is gone (killed meanwhile); nothing to say.
		unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// pfForkNoExec is PF_FORKNOEXEC, a task's flag from its fork to its
// exec (proc(5), /proc/PID/stat field 9).
const pfForkNoExec = 0x40

// mayJoin says that req is the zygote's own fork making its process group:
// setpgid(0, 0), while a fork runs, from a child of the fork thread that
// has not exec'd. Such a child is the fork's: the fork thread makes no
// other; what a command leaves goes to the main thread (ZygoteMain); a
// command's clone(CLONE_PARENT), which would give the fork thread a child
// of the command's, is refused by the filter. The pid is read through
// /proc, then the notification is checked to still wait: the caller was
// blocked in it all the while, so it is the process that was read.
func (s *server) mayJoin(listener, forkTid int, req *proto.SeccompNotif) bool {
	if req.Nr != unix.SYS_SETPGID || req.Args[0] != 0 || req.Args[1] != 0 || s.forking.Load() == 0 {
		return false
	}
	pid := int(req.Pid)
	if !slices.Contains(threadChildren(forkTid), pid) {
		return false
	}
	if p, ok := sweep.Stat(pid); !ok || p.Flags&pfForkNoExec == 0 {
		return false
	}
	id := req.ID
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// siginfoPid is si_pid of a SIGCHLD's siginfo: the first field of the
// union that follows si_signo, si_errno and si_code, aligned to a
// pointer.
func siginfoPid(info *unix.Siginfo) int {
	off := unsafe.Sizeof(uintptr(0)) * 2
	if unsafe.Sizeof(uintptr(0)) == 4 {
		off = 12
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), off)))
}
