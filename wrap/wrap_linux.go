package wrap

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/jail"
)

// SelfExe is the binary re-executed as the jail init.
const SelfExe = "/proc/self/exe"

// A Request is one command to run in a jail.
type Request struct {
	Spec   jail.Spec
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// KillTimeout is how long a cancelled jail has after SIGTERM before it
	// is killed.
	KillTimeout time.Duration
	// Started, if set, is called once the jail is made and the target
	// started, while it may still run.
	Started func()
}

// Run runs the request in a jail and returns what the parent saw.
func Run(ctx context.Context, req *Request) degrade.Outcome {
	var started atomic.Bool
	cmd, rd, err := command(ctx, req, &started)
	if err != nil {
		return degrade.Outcome{StartErr: err}
	}
	defer rd.Close()
	err = cmd.Start()
	// The read end sees EOF only once every write end is closed: ours must
	// go now, or a silent child would hang the read below.
	cmd.ExtraFiles[0].Close()
	cmd.ExtraFiles[1].Close()
	if err != nil {
		return startFailed(err, req.Spec.HostNetwork)
	}
	report := make(chan []byte, 1)
	go func() {
		report <- readSentinel(rd, func() {
			started.Store(true)
			if req.Started != nil {
				req.Started()
			}
		})
	}()
	werr := cmd.Wait()
	out := degrade.Outcome{Status: exitStatus(cmd, werr), ExecStep: jail.StepExec.String()}
	if r, ok := jail.DecodeReport(<-report); ok {
		out.Report = &degrade.Report{Step: r.Step.String(), Errno: r.Errno}
		out.PathStep = r.Step.ResolvesPath()
		out.Note = r.Step.Note(r.Errno)
	}
	return out
}

// startFailed is the outcome of a start that failed. An EPERM or EACCES
// is checked before it can count as the host refusing the jail (mode 1):
// if a plain clone with the same namespaces and id maps is allowed, the
// refusal was the exec of wsh's own binary (its mode changed, say), which
// is no reason to run commands unsandboxed.
func startFailed(err error, hostNetwork bool) degrade.Outcome {
	out := degrade.Outcome{StartErr: err}
	if (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)) && namespacesAllowed(hostNetwork) {
		out.NotHost = true
		out.Note = "the namespaces were allowed; the exec of wsh's own binary was refused"
	}
	return out
}

// readSentinel reads what the jail init wrote, up to EOF. EOF with nothing
// written means the setup is over and the target started (or the init died
// without a word): then started is called, while the target may still run.
func readSentinel(rd *os.File, started func()) []byte {
	var buf [jail.ReportSize + 1]byte
	n, _ := io.ReadFull(rd, buf[:])
	if n == 0 && started != nil {
		started()
	}
	return buf[:n]
}

// command builds the *exec.Cmd of the jail init and the sentinel's read end.
func command(ctx context.Context, req *Request, started *atomic.Bool) (*exec.Cmd, *os.File, error) {
	spec, err := specFile(&req.Spec)
	if err != nil {
		return nil, nil, err
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		spec.Close()
		return nil, nil, err
	}
	exe, err := exePath()
	if err != nil {
		spec.Close()
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{jail.InitArg0}
	cmd.Env = req.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	// No cmd.Dir: a chdir refused in the child would look like a refused
	// clone (mode 1); the init's own chdir step reports it as a path step.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = req.Stdin, req.Stdout, req.Stderr
	cmd.ExtraFiles = []*os.File{wr, spec} // fds 3 and 4: jail.ReportFD, jail.SpecFD
	cmd.SysProcAttr = sysProcAttr(req.Spec.HostNetwork)
	// A cancelled target gets SIGTERM, forwarded by the init, and SIGKILL
	// KillTimeout later. Before the target has started there is nothing
	// to stop gracefully, and the init may not take SIGTERM yet (as PID 1
	// it does not get signals it has no handler for): it gets SIGKILL.
	cmd.Cancel = func() error {
		if started.Load() {
			return cmd.Process.Signal(syscall.SIGTERM)
		}
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = req.KillTimeout
	return cmd, rd, nil
}

// specFile puts the encoded spec in a memfd, read from the start.
func specFile(s *jail.Spec) (*os.File, error) {
	b, err := s.Encode()
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("wsh-spec", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "wsh-spec")
	_, err = f.Write(b)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func sysProcAttr(hostNetwork bool) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
		syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if !hostNetwork {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags: flags,
		// The identity map: the same ids inside as outside.
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		// A uid other than 0 loses every capability at the exec of the jail
		// init (capabilities(7), "Transformation of capabilities during
		// execve"); ambient ones survive it. The init needs these for its
		// setup, and empties every set before the target runs.
		AmbientCaps: initCaps,
		Setsid:      true,
		Pdeathsig:   syscall.SIGKILL,
	}
}

// initCaps are the capabilities, in the jail's own user namespace, that
// the setup steps use: mounts, bringing up lo, dropping the bounding set.
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

func exitStatus(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return 126
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
