package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// maxFD bounds the descriptor scan; the tests pass far fewer.
const maxFD = 1024

// openFDs are the descriptors the process was started with.
type openFDs []int

// scanFDs finds the open descriptors below maxFD with fcntl(F_GETFD),
// which opens nothing.
func scanFDs() openFDs {
	var open openFDs
	for fd := 0; fd < maxFD; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			open = append(open, fd)
		}
	}
	return open
}

// report says which descriptors were open ("0 1 2 3=socket:[123]") and
// whether every one from 3 up gave EBADF.
func (fds openFDs) report(r results) {
	var out []string
	above := "EBADF"
	for _, fd := range fds {
		s := strconv.Itoa(fd)
		if fd > 2 {
			target, _ := os.Readlink("/proc/self/fd/" + s)
			s += "=" + target
			above = "open"
		}
		out = append(out, s)
	}
	r["fds"] = strings.Join(out, " ")
	r["fcntl(fd>=3)"] = above
}

// privs reads the process's privileges back from /proc/self/status.
func privs(r results, _ *config) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fail("%v", err)
	}
	for _, f := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"} {
		r["status:"+f] = statusField(string(b), f)
	}
}

func statusField(status, field string) string {
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	return "absent"
}

// filesystem writes where the jail is read-only. Nothing changes: a file
// made in a throwaway namespace is removed at once, the kernel settings are
// only opened for writing, and the one write is out of range.
func filesystem(r results, _ *config) {
	for _, dir := range []string{"/etc", "/usr"} {
		p := fmt.Sprintf("%s/wsh-attack-%d", dir, os.Getpid())
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			unix.Unlink(p)
		}
		r["create "+dir+"/…"] = errName(err)
	}
	for _, p := range []string{"/sys/class/net/lo/mtu", "/sys/kernel/mm/transparent_hugepage/enabled", "/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern"} {
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		r["open "+p+" for writing"] = errName(err)
	}
	r["write 0 to /proc/sys/vm/drop_caches"] = writeOutOfRange()
}

// writeOutOfRange writes 0 to vm.drop_caches, whose range is 1 to 4: the
// kernel answers EINVAL after every permission check has passed, and drops
// nothing. So EINVAL means a host-wide setting was writable.
func writeOutOfRange() string {
	fd, err := unix.Open("/proc/sys/vm/drop_caches", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "open: " + errName(err)
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("0"))
	return errName(err)
}

// network lists the network devices and connects to the host's listeners.
func network(r results, cfg *config) {
	ents, err := os.ReadDir("/sys/class/net")
	var devs []string
	for _, e := range ents {
		devs = append(devs, e.Name())
	}
	r["/sys/class/net"] = strings.Join(devs, " ")
	if err != nil {
		r["/sys/class/net"] = errName(err)
	}
	if cfg.tcp != "" {
		r["connect(host loopback TCP)"] = dial("tcp", cfg.tcp)
	}
	if cfg.abstract != "" {
		r["connect(host abstract unix)"] = dial("unix", "@"+cfg.abstract)
	}
	if cfg.unixPath != "" {
		r["connect(host unix socket path)"] = dial("unix", cfg.unixPath)
	}
}

func dial(network, addr string) string {
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err == nil {
		c.Close()
	}
	return errName(err)
}

func pids(r results, cfg *config) {
	if cfg.hostPID != 0 {
		r["kill(host pid, 0)"] = errName(unix.Kill(cfg.hostPID, 0))
	}
}
