//go:build linux && cgo

package main

import (
	"fmt"
	"os"
	"strings"

	mobyseccomp "github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	seccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// dockerCaps are the capabilities Docker gives a container by default.
var dockerCaps = []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"}

var capNumbers = map[string]int{"CAP_CHOWN": unix.CAP_CHOWN, "CAP_DAC_OVERRIDE": unix.CAP_DAC_OVERRIDE, "CAP_FSETID": unix.CAP_FSETID,
	"CAP_FOWNER": unix.CAP_FOWNER, "CAP_MKNOD": unix.CAP_MKNOD, "CAP_NET_RAW": unix.CAP_NET_RAW, "CAP_SETGID": unix.CAP_SETGID,
	"CAP_SETUID": unix.CAP_SETUID, "CAP_SETFCAP": unix.CAP_SETFCAP, "CAP_SETPCAP": unix.CAP_SETPCAP,
	"CAP_NET_BIND_SERVICE": unix.CAP_NET_BIND_SERVICE, "CAP_SYS_CHROOT": unix.CAP_SYS_CHROOT, "CAP_KILL": unix.CAP_KILL,
	"CAP_AUDIT_WRITE": unix.CAP_AUDIT_WRITE}

// dockerDefault makes this process what a process in a Docker container
// with the default settings is: moby's real default seccomp profile,
// resolved for Docker's default capabilities as dockerd resolves it, and
// those capabilities only (bounding set, effective, permitted,
// inheritable). The filter is loaded first, while root still has
// CAP_SYS_ADMIN (Docker sets no no_new_privs); without it (any other
// user) no_new_privs is set, as loading a filter needs.
func dockerDefault() error {
	spec := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{
		Bounding: dockerCaps, Effective: dockerCaps, Permitted: dockerCaps}}}
	prof, err := mobyseccomp.GetDefaultProfile(spec)
	if err != nil {
		return fmt.Errorf("moby's default profile: %w", err)
	}
	if err := loadOCI(prof, os.Geteuid() != 0); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	keep := map[int]bool{}
	for _, c := range dockerCaps {
		keep[capNumbers[c]] = true
	}
	for c := 0; ; c++ {
		if keep[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err == unix.EINVAL {
			break
		} else if err != nil {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP %d): %w", c, err)
		}
	}
	var data [2]unix.CapUserData
	for c := range keep {
		data[c/32].Effective |= 1 << (c % 32)
		data[c/32].Permitted |= 1 << (c % 32)
		data[c/32].Inheritable |= 1 << (c % 32)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// loadOCI loads an OCI seccomp profile with libseccomp, as runc does.
func loadOCI(p *specs.LinuxSeccomp, nnp bool) error {
	def, err := ociAction(p.DefaultAction, p.DefaultErrnoRet)
	if err != nil {
		return err
	}
	f, err := seccomp.NewFilter(def)
	if err != nil {
		return err
	}
	defer f.Release()
	for _, a := range p.Architectures {
		arch, err := seccomp.GetArchFromString(strings.ToLower(strings.TrimPrefix(string(a), "SCMP_ARCH_")))
		if err == nil {
			f.AddArch(arch)
		}
	}
	for _, sc := range p.Syscalls {
		act, err := ociAction(sc.Action, sc.ErrnoRet)
		if err != nil {
			return err
		}
		if act == def {
			continue
		}
		var conds []seccomp.ScmpCondition
		for _, a := range sc.Args {
			op, err := ociOp(a.Op)
			if err != nil {
				return err
			}
			c, err := seccomp.MakeCondition(a.Index, op, a.Value, a.ValueTwo)
			if err != nil {
				return err
			}
			conds = append(conds, c)
		}
		for _, name := range sc.Names {
			call, err := seccomp.GetSyscallFromName(name)
			if err != nil {
				continue // a call this libseccomp does not know
			}
			if len(conds) == 0 {
				err = f.AddRule(call, act)
			} else {
				err = f.AddRuleConditional(call, act, conds)
			}
			if err != nil {
				return fmt.Errorf("moby's profile: %s: %w", name, err)
			}
		}
	}
	if err := f.SetNoNewPrivsBit(nnp); err != nil {
		return err
	}
	return f.Load()
}

func ociAction(a specs.LinuxSeccompAction, errno *uint) (seccomp.ScmpAction, error) {
	switch a {
	case specs.ActAllow:
		return seccomp.ActAllow, nil
	case specs.ActErrno:
		e := uint(unix.EPERM)
		if errno != nil {
			e = *errno
		}
		return seccomp.ActErrno.SetReturnCode(int16(e)), nil
	case specs.ActKill, specs.ActKillThread:
		return seccomp.ActKillThread, nil
	case specs.ActKillProcess:
		return seccomp.ActKillProcess, nil
	case specs.ActTrap:
		return seccomp.ActTrap, nil
	case specs.ActLog:
		return seccomp.ActLog, nil
	}
	return 0, fmt.Errorf("moby's profile: action %s", a)
}

func ociOp(o specs.LinuxSeccompOperator) (seccomp.ScmpCompareOp, error) {
	switch o {
	case specs.OpNotEqual:
		return seccomp.CompareNotEqual, nil
	case specs.OpLessThan:
		return seccomp.CompareLess, nil
	case specs.OpLessEqual:
		return seccomp.CompareLessOrEqual, nil
	case specs.OpEqualTo:
		return seccomp.CompareEqual, nil
	case specs.OpGreaterEqual:
		return seccomp.CompareGreaterEqual, nil
	case specs.OpGreaterThan:
		return seccomp.CompareGreater, nil
	case specs.OpMaskedEqual:
		return seccomp.CompareMaskedEqual, nil
	}
	return 0, fmt.Errorf("moby's profile: operator %s", o)
}
