//go:build linux && cgo

package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// facts are what doctor reports about the host, besides the probe.
type facts struct {
	Kernel                  string `json:"kernel"`
	MaxUserNamespaces       *int64 `json:"user.max_user_namespaces"`
	UnprivilegedUsernsClone *int64 `json:"kernel.unprivileged_userns_clone"`
	AppArmorRestrictUserns  *int64 `json:"kernel.apparmor_restrict_unprivileged_userns"`
	OwnSeccomp              *int64 `json:"own_seccomp"`
	Container               string `json:"container"`
}

func gatherFacts() facts {
	f := facts{
		Kernel:                  kernelRelease(),
		MaxUserNamespaces:       sysctl("user/max_user_namespaces"),
		UnprivilegedUsernsClone: sysctl("kernel/unprivileged_userns_clone"),
		AppArmorRestrictUserns:  sysctl("kernel/apparmor_restrict_unprivileged_userns"),
		Container:               container(),
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
				f.OwnSeccomp = number(v)
			}
		}
	}
	return f
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// sysctl reads /proc/sys/NAME, a number, or nil where it does not exist.
func sysctl(name string) *int64 {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return nil
	}
	return number(string(b))
}

// number is s as a number, or nil.
func number(s string) *int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// container names the container wsh seems to run in, or "none".
func container() string {
	if v := os.Getenv("container"); v != "" {
		return v
	}
	for path, name := range map[string]string{"/.dockerenv": "docker", "/run/.containerenv": "podman"} {
		if _, err := os.Stat(path); err == nil {
			return name
		}
	}
	b, _ := os.ReadFile("/proc/1/cgroup")
	for _, k := range []string{"kubepods", "docker", "lxc", "containerd"} {
		if strings.Contains(string(b), k) {
			return k
		}
	}
	return "none"
}
