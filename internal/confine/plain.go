//go:build linux && cgo

package confine

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/internal/proto"
	"wsh/internal/shellfs"
	"wsh/internal/umask"
)

// notExecutable handles an exec of the target that failed: in the jail, or
// unsandboxed.
func (j *Jailer) notExecutable(ctx context.Context, c *command, errno syscall.Errno, jailed bool) error {
	switch {
	case errno == syscall.ENOEXEC && jailed && c.of == nil:
		return j.runScriptJailed(ctx, c)
	case errno == syscall.ENOEXEC && !jailed:
		return j.runScript(ctx, c)
	case errno == syscall.ENOENT:
		// A missing interpreter in a #! line, or a file gone since lookup.
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %s\n", c.name(), "No such file or directory")
		return interp.ExitStatus(127)
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s: %s\n", c.name(), shellfs.ErrnoText(errno))
	return interp.ExitStatus(126)
}

// plain runs a command unsandboxed: with the caller's next exec handler
// where package wrap's Middleware was given one.
func (j *Jailer) plain(ctx context.Context, c *command) error {
	if next, ok := ctx.Value(nextKey{}).(interp.ExecHandlerFunc); ok && c.of == nil {
		return next(ctx, c.args)
	}
	cmd := j.plainCmd(ctx, c)
	start := func() (err error) {
		umask.With(c.hc, func() { err = cmd.Start() }) // the child's umask is the script's
		return err
	}
	err := start()
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		// A concurrently forked process may briefly hold the file open
		// for writing (go.dev/issue/22315).
		time.Sleep(delay)
		cmd = j.plainCmd(ctx, c)
		err = start()
	}
	if errors.Is(err, syscall.EPERM) && cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		// Nothing ran. A filter wsh itself runs under may refuse
		// setpgid (another wsh's jail on a lower rung refuses it and
		// setsid, so that nothing escapes its kill): then the command
		// runs in wsh's own group, as under a terminal's foreground.
		cmd = j.plainCmd(ctx, c)
		cmd.SysProcAttr = nil
		if err = start(); err == nil {
			j.noGroups.Store(true)
			j.sayOnce("wsh: setpgid is refused to wsh (it runs under a filter that refuses it, as inside another wsh's jail): unsandboxed commands run in wsh's own process group")
		}
	}
	if err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
			return interp.ExitStatus(126)
		}
		return j.notExecutable(ctx, c, errno, false)
	}
	stop := forwardPlain(cmd, c.rc)
	werr := cmd.Wait()
	stop()
	j.sharedGroupEnded(cmd, c.rc)
	if err := ctx.Err(); err != nil {
		return err
	}
	if cmd.ProcessState == nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], werr)
		return interp.ExitStatus(126)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		return exitStatus(proto.WaitStatus(ws))
	}
	return exitStatus(cmd.ProcessState.ExitCode())
}

func (j *Jailer) plainCmd(ctx context.Context, c *command) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.path)
	cmd.Args = c.args
	cmd.Env = c.env
	cmd.Dir = c.hc.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.hc.Stdin, c.hc.Stdout, c.hc.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = j.KillTimeout
	if !terminalForeground() && !j.noGroups.Load() {
		// A process group of its own, which an interrupt reaches whole
		// (a shell and the child it waits for), as a terminal's would.
		// Not when wsh's group is its terminal's foreground one: the
		// terminal's Ctrl-C reaches the command there as it reaches wsh,
		// and a group of its own would be stopped (SIGTTIN) when it
		// reads the terminal.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return cmd
}

func exitStatus(status int) error {
	if status == 0 {
		return nil
	}
	return interp.ExitStatus(uint8(status))
}

// forwardPlain passes a command's signals on to it, unsandboxed: to its
// process group, if it has one of its own (plainCmd); else to it alone,
// but for an interrupt, which the terminal's Ctrl-C brought to the
// command as it brought it to wsh (a second SIGINT would interrupt its
// handler of the first). stop ends it, before the command is reaped.
func forwardPlain(cmd *exec.Cmd, rc *running) (stop func()) {
	if rc == nil {
		return func() {}
	}
	group := cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid
	done, over := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(over)
		for {
			select {
			case <-done:
				return
			case sig := <-rc.sigs:
				// Until stop, which comes right after the reaping,
				// the pid and group are the command's (or gone: ESRCH).
				switch {
				case group:
					unix.Kill(-cmd.Process.Pid, sig)
				case sig != syscall.SIGINT || !rc.interrupted.Load():
					cmd.Process.Signal(sig)
				}
			}
		}
	}()
	return func() { close(done); <-over }
}

// terminalForeground says whether wsh's process group is the foreground
// one of its controlling terminal.
func terminalForeground() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false // no controlling terminal
	}
	defer unix.Close(fd)
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// sharedGroupEnded notes an unsandboxed foreground command that was in
// wsh's own process group, its terminal's foreground one, and died of
// SIGINT: a Ctrl-C reached it and wsh at once, and wsh's handling of it
// may come after the command is gone. It is taken as interrupted: the
// script ends, as bash's does. (A command that kills itself with SIGINT
// there ends the script too, where bash's goes on.)
func (j *Jailer) sharedGroupEnded(cmd *exec.Cmd, rc *running) {
	if rc == nil || rc.job != "" || cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid || cmd.ProcessState == nil {
		return
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
		rc.interrupted.Store(true)
	}
}
