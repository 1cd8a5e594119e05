package initproc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/initsys"
	"wsh/internal/proto"
)

// reap starts the target as the child of this PID 1, forwards signals to it,
// reaps every process, and returns the target's status once it has exited.
// Whatever the target left behind is killed.
func reap(spec *proto.Spec, sigs <-chan os.Signal) int {
	pidfd := -1
	setUmask(spec)
	pid, err := syscall.ForkExec(spec.Path, spec.Args, &syscall.ProcAttr{
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		// A process group of its own, which every signal wsh passes on
		// reaches, as a terminal's Ctrl-C reaches the foreground group:
		// a shell's child gets the SIGINT its shell gets.
		Sys: &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd},
	})
	if err != nil {
		initsys.WriteReport(degrade.StepExec, err)
		return proto.ReservedStatus
	}
	unix.Close(proto.ReportFD) // the setup is over; the parent reads EOF now
	go func() {
		for s := range sigs {
			unix.Kill(-pid, s.(syscall.Signal))
		}
	}()
	if pidfd >= 0 {
		go killAllAtExit(pidfd)
	}
	status := waitFor(pid)
	unix.Kill(-1, unix.SIGKILL) // orphans the target left
	initsys.ReapAll()
	return status
}

// killAllAtExit kills every other process of the jail as soon as the
// target has exited. The reaper's wait would see the exit only once a
// tracer lets go of it: a process of the jail that ptraces the target is
// told of its exit first, and until it waits for it the target is a zombie
// its parent cannot reap, so the jail would go on for as long as the tracer
// liked. A pidfd is readable as soon as the process has exited, traced or
// not; the tracer's death then hands the target's status to the reaper.
func killAllAtExit(pidfd int) {
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if _, err := initsys.RetryEINTR(func() (int, error) { return unix.Poll(fds, -1) }); err != nil {
		return
	}
	unix.Kill(-1, unix.SIGKILL)
}

func waitFor(pid int) int {
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
		case err != nil:
			return proto.ReservedStatus // bug: the target was never reaped
		case wpid != pid:
		default:
			return proto.WaitStatus(syscall.WaitStatus(ws))
		}
	}
}

// setUmask gives the target the script's umask, if it set one (the init
// makes no file after it).
func setUmask(spec *proto.Spec) {
	if spec.UmaskSet {
		syscall.Umask(int(spec.Umask))
	}
}
