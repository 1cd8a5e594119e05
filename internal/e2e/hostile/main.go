//go:build linux && cgo

// Command hostile is a test helper that makes this host refuse wsh's jail
// the way real hosts do, and then runs wsh (or any program) there.
//
//	hostile MODE -- PROGRAM [ARG...]   make the host hostile, then exec PROGRAM
//	hostile MODE probe                 make the host hostile, then try the
//	                                   jail's clone and its first mount, and
//	                                   print what the kernel answered
//
// The modes:
//
//	0  nothing refused (the control)
//	1  clone and unshare with any CLONE_NEW* flag: EPERM; clone3: ENOSYS
//	   (Docker's default profile without CAP_SYS_ADMIN)
//	2  the same with EACCES
//	3  mount, umount2, pivot_root and the new mount API: EPERM
//	4  the same with EACCES
//	5  a user namespace whose user.max_user_namespaces is 0 (ENOSPC)
//	6  mode 1, and no Landlock: landlock_create_ruleset, landlock_add_rule
//	   and landlock_restrict_self give ENOSYS (gVisor, an old kernel)
//	7  docker-default: moby's real default seccomp profile, resolved for
//	   Docker's default capabilities, and (as root) those capabilities
//	   only, as a process in a default Docker container has them
//	8  mode 1, in a filter with a listener (acct goes to it), which the
//	   program inherits, open: a host whose supervisor intercepts system
//	   calls (seccomp_unotify(2)), where no further listener is given
//	9  nothing refused, in such a filter with a listener: a supervisor's
//	   host that lets the jail be made (sysbox, LXD's interception)
//
// Modes 1 to 4 load a seccomp filter with no_new_privs, which needs no
// privilege, so the harness runs as any uid. Mode 5 re-executes the harness
// in a new user namespace, where the limit is the namespace's own to set.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The argv[0] of the harness's own re-executions.
const (
	usernsArg0     = "hostile-userns"
	probeChildArg0 = "hostile-probe-child"
)

// failStatus is the harness's own failure, distinct from wsh's statuses.
const failStatus = 111

const usage = "usage: hostile MODE -- PROGRAM [ARG...]\n       hostile MODE probe"

func main() {
	if os.Args[0] == probeChildArg0 {
		os.Exit(probeChild())
	}
	if err := run(os.Args[1:], os.Args[0] == usernsArg0); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(failStatus)
	}
}

// run makes the host hostile in mode args[0], then does what the rest of
// args asks. It returns only on a failure (or after a probe).
func run(args []string, inUserns bool) error {
	if len(args) < 2 {
		return fmt.Errorf("missing arguments\n%s", usage)
	}
	mode, err := strconv.Atoi(args[0])
	if err != nil || mode < 0 || mode > 9 {
		return fmt.Errorf("%q is not a mode (0 to 9)\n%s", args[0], usage)
	}
	probe := len(args) == 2 && args[1] == "probe"
	if !probe && (args[1] != "--" || len(args) < 3) {
		return fmt.Errorf("want -- PROGRAM or probe\n%s", usage)
	}
	switch {
	case mode == 5 && !inUserns:
		os.Exit(reexecInUserns(args))
	case mode == 5:
		if err := noMoreUserns(); err != nil {
			return err
		}
	case mode == 7:
		if err := dockerDefault(); err != nil {
			return err
		}
	case mode > 0:
		if err := loadFilter(mode); err != nil {
			return err
		}
	}
	if probe {
		os.Exit(probeClone())
	}
	path, err := exec.LookPath(args[2])
	if err != nil {
		return err
	}
	return syscall.Exec(path, args[2:], os.Environ())
}

// denyErrno is the errno a mode's filter answers with.
func denyErrno(mode int) unix.Errno {
	if mode == 2 || mode == 4 {
		return unix.EACCES
	}
	return unix.EPERM
}

// The CLONE_NEW* flags. CLONE_NEWTIME shares its bit with the exit signal
// in clone(2) (CSIGNAL), so it is a namespace flag for unshare only.
var (
	cloneNewFlags   = []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET}
	unshareNewFlags = append([]uint64{unix.CLONE_NEWTIME}, cloneNewFlags...)
	mountCalls      = []string{"mount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"}
)

// loadFilter loads the seccomp filter of modes 1 to 4, 6, 8 and 9. It applies to every
// thread (libseccomp-golang asks for TSYNC) and to whatever is exec'd next.
func loadFilter(mode int) error {
	f, err := seccomp.NewFilter(seccomp.ActAllow)
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	defer f.Release()
	deny := seccomp.ActErrno.SetReturnCode(int16(denyErrno(mode)))
	switch {
	case mode <= 2:
		err = namespaceRules(f, deny)
	case mode == 8:
		err = namespaceRules(f, deny)
		if err == nil {
			err = addRule(f, "acct", seccomp.ActNotify, 0)
		}
	case mode == 9:
		err = addRule(f, "acct", seccomp.ActNotify, 0)
	case mode == 6:
		err = namespaceRules(f, deny)
		for _, call := range []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"} {
			if err == nil {
				err = addRule(f, call, seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS)), 0)
			}
		}
	default:
		for _, call := range mountCalls {
			if err = addRule(f, call, deny, 0); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	// libseccomp's default, said out loud: with no_new_privs, loading a
	// filter needs no privilege.
	if err := f.SetNoNewPrivsBit(true); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	if err := f.Load(); err != nil {
		return fmt.Errorf("seccomp: load: %w", err)
	}
	if mode == 8 || mode == 9 {
		// The listener stays open in the program (no one answers it:
		// acct would wait), so the filter keeps it.
		fd, err := f.GetNotifFd()
		if err != nil {
			return fmt.Errorf("seccomp: listener: %w", err)
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return fmt.Errorf("seccomp: listener: %w", err)
		}
	}
	return nil
}

func namespaceRules(f *seccomp.ScmpFilter, deny seccomp.ScmpAction) error {
	for _, fl := range cloneNewFlags {
		if err := addRule(f, "clone", deny, fl); err != nil {
			return err
		}
	}
	for _, fl := range unshareNewFlags {
		if err := addRule(f, "unshare", deny, fl); err != nil {
			return err
		}
	}
	// clone3 passes its flags in memory a filter cannot read.
	return addRule(f, "clone3", seccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS)), 0)
}

// addRule refuses call: always when flag is 0, otherwise when its first
// argument has flag set (masked equal: Operand1 is the mask, Operand2 the
// value).
func addRule(f *seccomp.ScmpFilter, call string, act seccomp.ScmpAction, flag uint64) error {
	nr, err := seccomp.GetSyscallFromName(call)
	if err != nil {
		return fmt.Errorf("seccomp: %s: %w", call, err)
	}
	if flag == 0 {
		err = f.AddRule(nr, act)
	} else {
		var cond seccomp.ScmpCondition
		cond, err = seccomp.MakeCondition(0, seccomp.CompareMaskedEqual, flag, flag)
		if err == nil {
			err = f.AddRuleConditional(nr, act, []seccomp.ScmpCondition{cond})
		}
	}
	if err != nil {
		return fmt.Errorf("seccomp: %s: %w", call, err)
	}
	return nil
}

// reexecInUserns runs this harness again, with the same arguments, in a new
// user namespace where it holds CAP_SYS_RESOURCE, and returns its status.
func reexecInUserns(args []string) int {
	uid, gid := os.Getuid(), os.Getgid()
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Args[0] = usernsArg0
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER,
		// The identity map (Go writes it before the child runs on).
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// A uid other than 0 keeps no capability across exec but ambient
		// ones; the namespace's sysctl needs CAP_SYS_RESOURCE in it.
		AmbientCaps: []uintptr{unix.CAP_SYS_RESOURCE},
		Pdeathsig:   syscall.SIGKILL,
	}
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "hostile: new user namespace:", err)
		return failStatus
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// noMoreUserns sets this user namespace's user.max_user_namespaces to 0,
// checks it reads back, and drops the ambient capability that allowed it.
func noMoreUserns() error {
	const p = "/proc/sys/user/max_user_namespaces"
	if err := os.WriteFile(p, []byte("0\n"), 0); err != nil {
		return err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(b)) != "0" {
		return fmt.Errorf("%s reads %q after writing 0", p, b)
	}
	return os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)",
		unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
}
