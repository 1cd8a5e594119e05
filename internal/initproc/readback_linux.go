package initproc

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// readback prints what the kernel says about this process.
func readback() int {
	r := proto.Readback{NoNewPrivs: -1, Seccomp: -1, NetDevices: []string{}}
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 1
	}
	for _, line := range strings.Split(string(st), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		if p := statusFields(&r)[k]; p != nil {
			*p = v
		}
		if p := statusNumbers(&r)[k]; p != nil {
			if n, err := strconv.Atoi(v); err == nil {
				*p = n
			}
		}
	}
	r.PID = os.Getpid()
	// The readback is the init's binary run again (/proc/self/exe of the
	// init): this is the file every jail init of this wsh runs from.
	r.Exe, _ = os.Readlink("/proc/self/exe")
	if b, err := os.ReadFile("/proc/1/cmdline"); err == nil {
		r.PID1, _, _ = strings.Cut(string(b), "\x00")
	}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			r.NetDevices = append(r.NetDevices, e.Name())
		}
	}
	r.RootRO = rootReadOnly()
	if len(os.Args) == 3 && os.Args[1] != "" {
		r.Home = homeReadback(os.Args[1], os.Args[2])
	}
	if p := os.Getenv("HTTPS_PROXY"); p != "" {
		r.Proxy = proxyAnswer(p)
	}
	if err := json.NewEncoder(os.Stdout).Encode(&r); err != nil {
		return 1
	}
	return 0
}

func statusFields(r *proto.Readback) map[string]*string {
	return map[string]*string{
		"CapInh": &r.CapInh, "CapPrm": &r.CapPrm, "CapEff": &r.CapEff, "CapBnd": &r.CapBnd,
		"CapAmb": &r.CapAmb,
	}
}

func statusNumbers(r *proto.Readback) map[string]*int {
	return map[string]*int{"NoNewPrivs": &r.NoNewPrivs, "Seccomp": &r.Seccomp}
}

// rootReadOnly reads the mount options of / from mountinfo.
func rootReadOnly() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	ro := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			// The last mount on / is the one in force.
			ro = strings.Contains(","+f[5]+",", ",ro,")
		}
	}
	return ro
}

// homeReadback reads the mount in force at home from mountinfo, and tries
// to open the state directory.
func homeReadback(home, state string) *proto.HomeReadback {
	h := &proto.HomeReadback{Path: home}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || f[4] != home {
			continue
		}
		h.FSType, h.Upper = g[0], ""
		for _, o := range strings.Split(g[2], ",") {
			if v, ok := strings.CutPrefix(o, "upperdir="); ok {
				h.Upper = v
			}
		}
	}
	if state != "" {
		f, err := os.Open(state)
		if err == nil {
			f.Close()
		}
		h.StateHidden = errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)
	}
	return h
}

// proxyAnswer asks the proxy at url (http://127.0.0.1:PORT, as wsh
// gives it) for a tunnel to ProxyProbeHost and returns the status line of
// its answer, or what went wrong. Plain syscalls: the init's binary does
// without package net.
func proxyAnswer(url string) string {
	ps, ok := strings.CutPrefix(url, "http://127.0.0.1:")
	port, err := strconv.Atoi(ps)
	if !ok || err != nil || port <= 0 || port > 65535 {
		return "not wsh's proxy: " + url
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err).Error()
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 5}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return os.NewSyscallError("connect", err).Error()
	}
	req := "CONNECT " + proto.ProxyProbeHost + " HTTP/1.1\r\nHost: " + proto.ProxyProbeHost + "\r\n\r\n"
	if _, err := unix.Write(fd, []byte(req)); err != nil {
		return os.NewSyscallError("write", err).Error()
	}
	var got []byte
	buf := make([]byte, 512)
	for !strings.Contains(string(got), "\n") && len(got) < 4096 {
		n, err := unix.Read(fd, buf)
		if err != nil {
			return os.NewSyscallError("read", err).Error()
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	line, _, _ := strings.Cut(string(got), "\n")
	return strings.TrimRight(line, "\r")
}
