package initproc

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
)

// forwarded are the signals the reaper passes on to the target.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}

// forwardedSignals are those of forwarded that the init did not inherit
// ignored: wsh passes SIGHUP and SIGINT on ignored when they are ignored in
// wsh (nohup), and then the target inherits them ignored too.
func forwardedSignals() []os.Signal {
	var out []os.Signal
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// dropped are the signals on which Go ends a program that has not asked
// for them (os/signal, "Default behavior of signals in Go programs"): the
// fault signals and SIGABRT. A target could send them to its PID 1 (kill
// -SEGV 1) and end its own init with a stack dump; the init catches and
// drops them. It leaves the others to Go, which catches and ignores them,
// or (SIGTSTP, SIGTTIN, SIGTTOU) leaves them at the default, which PID 1
// does not get from its own namespace. Each costs the init a round trip to
// os/signal's thread at start, so the list is no longer than it needs to
// be.
var dropped = func() []os.Signal {
	out := []os.Signal{unix.SIGABRT}
	for _, s := range proto.FaultSignals {
		out = append(out, s)
	}
	return out
}()

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
		writeReport(degrade.StepExec, err)
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
	reapAll()
	return status
}

// reapAll waits until every other process of the jail is gone. The
// kernel would kill and wait for them itself once PID 1 exits, but only
// after PID 1 has closed its descriptors: the lock of the home's mount
// (HomeLockFD) must outlast every process that can still write to the
// home's mount.
func reapAll() {
	for {
		_, err := unix.Wait4(-1, nil, unix.WALL, nil)
		if err != unix.EINTR && err != nil {
			return
		}
	}
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
	if _, err := retryEINTR(func() (int, error) { return unix.Poll(fds, -1) }); err != nil {
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
