package initproc

import (
	"os"
	"os/signal"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/sweep"
)

// A lower rung's session (Spec.Session on the landlock or seccomp rung):
// the init runs the rung's setup on its main thread, then execs itself as
// the zygote (ZygoteArg0), which forks every command of the session.
// Landlock's domain and the capabilities are a thread's own, and the Go
// runtime's other threads were made before the setup: the exec leaves one
// thread, the confined one, from which every thread of the zygote is
// made. Its commands inherit all of it (the filter: SessionForkGroup).
//
// The zygote leads a session of its own (the launch's setsid), which
// its commands cannot leave (setsid is refused) and no other process can
// join: every process of it is the zygote's or a command's, whatever
// became of its parent. What it kills, it finds there (package sweep).

// execZygote execs the zygote, keeping the channel and the sentinel.
func execZygote() int {
	for _, fd := range []int{proto.SessionFD, proto.ReportFD} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			writeReport(proto.StepExec, os.NewSyscallError("fcntl", err))
			return proto.ReservedStatus
		}
	}
	err := unix.Exec("/proc/self/exe", []string{proto.ZygoteArg0}, []string{})
	writeReport(proto.StepExec, err)
	return proto.ReservedStatus
}

// zygoteMain serves a lower rung's session. It is non-dumpable (the exec
// made it dumpable again), so that no command, of its uid, can open its
// channel through /proc, take it with pidfd_getfd or read its memory; it
// is the subreaper of its commands, so that what a command leaves becomes
// its child; and it has no parent-death signal: wsh's death ends it
// through the channel's end, after it has killed every process of the
// session.
func zygoteMain() int {
	runtime.LockOSThread() // each fork from one thread (watchFork)
	for _, opt := range [][2]uintptr{{unix.PR_SET_DUMPABLE, 0}, {unix.PR_SET_CHILD_SUBREAPER, 1}, {unix.PR_SET_PDEATHSIG, 0}} {
		if err := unix.Prctl(int(opt[0]), opt[1], 0, 0, 0); err != nil {
			writeReport(proto.StepExec, os.NewSyscallError("prctl", err))
			return proto.ReservedStatus
		}
	}
	for _, fd := range []int{proto.SessionFD, proto.ReportFD} {
		unix.CloseOnExec(fd)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals()...)
	signal.Notify(make(chan os.Signal, 1), dropped...)
	s := newServer(nil, true)
	s.serve(sigs)
	s.endLower()
	return 0
}

// endGrace bounds the zygote's last sweep; wsh sweeps the session too
// once the zygote is gone.
const endGrace = 2 * time.Second

// killLeftLower kills, when a command has exited, what it left: if a
// child of the zygote is no running command (a process whose parent
// died, made the zygote's by its subreaper), every process of the session
// that descends from no running command, found in one scan, whatever the
// depth. Called with mu held.
func (s *server) killLeftLower() {
	orphan := false
	for _, pid := range liveChildren() {
		if _, running := s.ids[pid]; !running {
			orphan = true
			break
		}
	}
	if !orphan {
		return
	}
	sweep.Kill(os.Getpid(), s.ofARunningCommand, endGrace)
}

// ofARunningCommand says that pid is a running command or descends from
// one. Called with mu held.
func (s *server) ofARunningCommand(pid int, ps map[int]sweep.Proc) bool {
	for n := 0; n <= len(ps); n++ {
		if _, running := s.ids[pid]; running {
			return true
		}
		p, ok := ps[pid]
		if !ok {
			return false // the zygote, or a parent that has exited
		}
		pid = p.PPid
	}
	return false
}

// endLower kills every process of the session.
func (s *server) endLower() {
	s.mu.Lock()
	defer s.mu.Unlock()
	sweep.Kill(os.Getpid(), nil, endGrace)
}

// liveChildren are the children of every thread of this process that
// have not exited.
func liveChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		for _, pid := range threadChildren(atoi(t.Name())) {
			if p, ok := sweep.Stat(pid); ok && p.State != 'Z' && p.State != 'X' {
				out = append(out, pid)
			}
		}
	}
	return out
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
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
