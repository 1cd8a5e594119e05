package main

import (
	"os/exec"
	"unsafe"

	"golang.org/x/sys/unix"
)

// siginfo makes the calls that send a signal with a siginfo of the
// caller's own (si_code SI_QUEUE, as sigqueue(3) does), or that pick the
// signal of a descriptor (F_SETSIG): with a fault signal and such a
// si_code, Go's runtime in the jail's init would take it for a real fault
// and die. Fault signals go only to children of the probe, never to PID 1:
// in the control run PID 1 is the host's init. To PID 1 only signal 0 (a
// permission check) is sent.
func siginfo(r results, _ *config) {
	var info [128]byte                       // siginfo_t: si_signo, si_errno, si_code, ...
	*(*int32)(unsafe.Pointer(&info[8])) = -1 // SI_QUEUE
	_, r["rt_sigqueueinfo(1, 0, SI_QUEUE)"] = call(unix.SYS_RT_SIGQUEUEINFO, 1, 0, ptr(&info[0]))
	_, r["rt_tgsigqueueinfo(1, 1, 0, SI_QUEUE)"] = call(unix.SYS_RT_TGSIGQUEUEINFO, 1, 1, 0, ptr(&info[0]))

	withChild(r, "rt_sigqueueinfo(child, SIGSEGV, SI_QUEUE)", func(pid uintptr) {
		_, r["rt_sigqueueinfo(child, SIGSEGV, SI_QUEUE)"] = call(unix.SYS_RT_SIGQUEUEINFO, pid, uintptr(unix.SIGSEGV), ptr(&info[0]))
	})
	withChild(r, "rt_tgsigqueueinfo(child, child, SIGBUS, SI_QUEUE)", func(pid uintptr) {
		_, r["rt_tgsigqueueinfo(child, child, SIGBUS, SI_QUEUE)"] = call(unix.SYS_RT_TGSIGQUEUEINFO, pid, pid, uintptr(unix.SIGBUS), ptr(&info[0]))
	})
	withChild(r, "pidfd_send_signal(child, 0, siginfo)", func(pid uintptr) {
		_, r["rt_sigqueueinfo(child, 0, SI_QUEUE)"] = call(unix.SYS_RT_SIGQUEUEINFO, pid, 0, ptr(&info[0]))
		pidfd, res := call(unix.SYS_PIDFD_OPEN, pid, 0)
		if res != "ok" {
			r["pidfd_send_signal(child, 0, siginfo)"] = "pidfd_open: " + res
			return
		}
		defer unix.Close(int(pidfd))
		_, r["pidfd_send_signal(child, 0, siginfo)"] = call(unix.SYS_PIDFD_SEND_SIGNAL, pidfd, 0, ptr(&info[0]), 0)
		_, r["pidfd_send_signal(child, 0, NULL)"] = call(unix.SYS_PIDFD_SEND_SIGNAL, pidfd, 0, 0, 0)
	})

	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		r["fcntl(F_SETSIG, SIGSEGV)"] = "pipe: " + errName(err)
		return
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	_, r["fcntl(F_SETSIG, SIGSEGV)"] = call(unix.SYS_FCNTL, uintptr(p[0]), unix.F_SETSIG, uintptr(unix.SIGSEGV))
	_, r["fcntl(F_SETSIG, SIGIO)"] = call(unix.SYS_FCNTL, uintptr(p[0]), unix.F_SETSIG, uintptr(unix.SIGIO))
}

// withChild runs f with the pid of a child of the probe that sleeps, and
// kills the child after.
func withChild(r results, name string, f func(pid uintptr)) {
	child := exec.Command("/bin/sleep", "10")
	if err := child.Start(); err != nil {
		r[name] = "error: " + err.Error()
		return
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	f(uintptr(child.Process.Pid))
}
