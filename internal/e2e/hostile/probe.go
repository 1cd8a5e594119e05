//go:build linux && cgo

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// probeClone does what wsh does to start its jail init (clone with the same
// namespace flags and id maps as wrap's spawn) and prints what the
// kernel answered, then what the child saw. The child is this harness again,
// as probeChild.
func probeClone() int {
	userns, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile: probe:", err)
		return failStatus
	}
	uid, gid := os.Getuid(), os.Getgid()
	cmd := exec.Command("/proc/self/exe", userns)
	cmd.Args[0] = probeChildArg0
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
		Setsid:      true,
		Pdeathsig:   syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		fmt.Printf("clone: %s\n", errName(err))
		return 0
	}
	err = cmd.Wait()
	fmt.Printf("clone: ok\n%s", out.Bytes())
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile: probe child:", err)
		return failStatus
	}
	return 0
}

// probeChild runs in the probe's new namespaces: it prints its pid, whether
// its user namespace is new (os.Args[1] is its parent's), and what the
// kernel answered to the jail's first mount (jail.mountPrivate).
func probeChild() int {
	fmt.Printf("pid: %d\n", os.Getpid())
	userns, err := os.Readlink("/proc/self/ns/user")
	switch {
	case err != nil:
		fmt.Printf("userns: %s\n", errName(err))
	case len(os.Args) > 1 && userns != os.Args[1]:
		fmt.Println("userns: new")
	default:
		fmt.Println("userns: same")
	}
	err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	fmt.Printf("mount-private: %s\n", errName(err))
	return 0
}

// errName is "ok" for nil, the errno's name (EPERM) when err carries one.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}
