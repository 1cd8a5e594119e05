package main

import (
	"os/exec"
	"unsafe"

	"golang.org/x/sys/unix"
)

// siginfo sends signal 0 (a permission check, nothing delivered) with a
// siginfo of its own (si_code SI_QUEUE, as sigqueue(3) does): to PID 1, and
// through a pidfd to a child of the probe. With another signal, Go's
// runtime in the jail's init would take it for a fault and die. Sending
// without a siginfo, and to other pids, stays allowed.
func siginfo(r results, _ *config) {
	var info [128]byte                       // siginfo_t: si_signo, si_errno, si_code, ...
	*(*int32)(unsafe.Pointer(&info[8])) = -1 // SI_QUEUE
	_, r["rt_sigqueueinfo(1, 0, SI_QUEUE)"] = call(unix.SYS_RT_SIGQUEUEINFO, 1, 0, ptr(&info[0]))
	_, r["rt_tgsigqueueinfo(1, 1, 0, SI_QUEUE)"] = call(unix.SYS_RT_TGSIGQUEUEINFO, 1, 1, 0, ptr(&info[0]))

	child := exec.Command("/bin/sleep", "10")
	if err := child.Start(); err != nil {
		r["pidfd_send_signal(child, 0, siginfo)"] = "error: " + err.Error()
		return
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	_, r["rt_sigqueueinfo(child, 0, SI_QUEUE)"] = call(unix.SYS_RT_SIGQUEUEINFO, uintptr(child.Process.Pid), 0, ptr(&info[0]))
	pidfd, res := call(unix.SYS_PIDFD_OPEN, uintptr(child.Process.Pid), 0)
	if res != "ok" {
		r["pidfd_send_signal(child, 0, siginfo)"] = "pidfd_open: " + res
		return
	}
	defer unix.Close(int(pidfd))
	_, r["pidfd_send_signal(child, 0, siginfo)"] = call(unix.SYS_PIDFD_SEND_SIGNAL, pidfd, 0, ptr(&info[0]), 0)
	_, r["pidfd_send_signal(child, 0, NULL)"] = call(unix.SYS_PIDFD_SEND_SIGNAL, pidfd, 0, 0, 0)
}
