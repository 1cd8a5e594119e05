package main

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// facts are what doctor reports about the host, besides the probe.
type facts struct {
	Kernel                  string  `json:"kernel"`
	MaxUserNamespaces       *string `json:"user.max_user_namespaces"`
	UnprivilegedUsernsClone *string `json:"kernel.unprivileged_userns_clone"`
	AppArmorRestrictUserns  *string `json:"kernel.apparmor_restrict_unprivileged_userns"`
	OwnSeccomp              string  `json:"own_seccomp"`
	Container               string  `json:"container"`
}

func gatherFacts() facts {
	f := facts{
		Kernel:                  kernelRelease(),
		MaxUserNamespaces:       sysctl("user/max_user_namespaces"),
		UnprivilegedUsernsClone: sysctl("kernel/unprivileged_userns_clone"),
		AppArmorRestrictUserns:  sysctl("kernel/apparmor_restrict_unprivileged_userns"),
		OwnSeccomp:              "unknown",
		Container:               container(),
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
				f.OwnSeccomp = strings.TrimSpace(v)
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

// sysctl reads /proc/sys/NAME, or nil where it does not exist.
func sysctl(name string) *string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return nil
	}
	v := strings.TrimSpace(string(b))
	return &v
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
