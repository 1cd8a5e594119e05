//go:build linux && cgo

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// This file runs testdata/attack, the attack probe: in the jail, and, as
// the control, in a throwaway `unshare -Urmn` namespace. The probe is never
// run on the host outside one of those.

// attackBin returns the path of testdata/attack. It links libseccomp: with
// -filter it loads wsh's own filter (seccomp.BuildFilter).
func attackBin(t *testing.T) string {
	return helperBin(t, "attack", "./testdata/attack")
}

// A hostSide is what the host offers to be reached from inside: a TCP
// listener on its loopback, listeners on an abstract unix socket and on a
// unix socket's path, its own pid, and descriptors left open without
// close-on-exec.
type hostSide struct {
	tcp, abstract, path net.Listener
	name                string // the abstract socket's name, without the @
	sock                string // the path of the other unix socket
	files               []*os.File
}

func newHostSide(t *testing.T) *hostSide {
	t.Helper()
	h := &hostSide{name: "wsh-attack-" + uniqueNumber(0)}
	var err error
	if h.tcp, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.tcp.Close() })
	if h.abstract, err = net.Listen("unix", "@"+h.name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.abstract.Close() })
	h.sock = filepath.Join(filepath.Dir(wshBin), h.name+".sock")
	h.path = unixListener(t, h.sock)
	// A file, a listening socket, a pipe, and a vsock socket (never
	// connected): a launcher's vsock socket reaches the hypervisor.
	h.files = append(inheritable(t), vsockFile(t))
	return h
}

// unixListener listens on a unix socket at path that every uid may
// connect to (connecting needs write permission on the socket).
func unixListener(t *testing.T, path string) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	return l
}

func vsockFile(t *testing.T) *os.File {
	t.Helper()
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket(AF_VSOCK) on the host: %v (this VM has a vsock device)", err)
	}
	f := os.NewFile(uintptr(fd), "vsock")
	t.Cleanup(func() { f.Close() })
	return f
}

// args are the probe's flags that point at the host; the socket with a
// path has its own test (TestContainmentHostUnixSocketPath).
func (h *hostSide) args() []string {
	return []string{"-hostpid", strconv.Itoa(os.Getpid()), "-tcp", h.tcp.Addr().String(), "-abstract", h.name}
}

// accepted returns the listeners that have a connection waiting.
func (h *hostSide) accepted(t *testing.T) []string {
	t.Helper()
	var got []string
	if accepted(t, h.tcp) {
		got = append(got, "tcp "+h.tcp.Addr().String())
	}
	for _, l := range []net.Listener{h.abstract, h.path} {
		ul := l.(*net.UnixListener)
		ul.SetDeadline(time.Now().Add(200 * time.Millisecond))
		if c, err := ul.Accept(); err == nil {
			c.Close()
			got = append(got, l.Addr().String())
		}
	}
	return got
}

// attackInJail runs the probe with args through `wsh -c` as u, fail-closed,
// with env added and the descriptors in files inherited by wsh, and returns
// what it printed.
func attackInJail(t *testing.T, u user, env []string, files []*os.File, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := strings.Join(append([]string{attackBin(t)}, args...), " ")
	cmd := wshCmd(ctx, u, workDir(t, u), append(append([]string(nil), jailEnv...), env...), "-c", script)
	cmd.ExtraFiles = files
	r, _ := probeOutput(t, cmd)
	return r
}

// attackUnshared runs the probe without wsh, as u, in a throwaway
// `unshare FLAGS` namespace (user, mount, and network unless told), and
// returns what it printed. The descriptors in files are inherited.
func attackUnshared(t *testing.T, u user, flags string, files []*os.File, args ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{flags, attackBin(t)}, args...)...)
	cmd.Dir = workDir(t, u)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + cmd.Dir, "TMPDIR=" + cmd.Dir}
	cmd.ExtraFiles = files
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	r, _ := probeOutput(t, cmd)
	return r
}

// probeOutput runs cmd and decodes the one JSON object it prints; it
// returns what cmd wrote to stderr too.
func probeOutput(t *testing.T, cmd *exec.Cmd) (map[string]string, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%q: %v\nstdout:\n%s\nstderr:\n%s", cmd.Args, err, out, stderr.String())
	}
	var r map[string]string
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%q printed no JSON object: %v\n%s\nstderr:\n%s", cmd.Args, err, out, stderr.String())
	}
	return r, stderr.String()
}

// want is what an attempt must give, for each user ("root", "nobody"). A
// value may list alternatives: "EROFS|EACCES". No entry: not asserted.
type want map[string]string

func all(v string) want         { return want{root.name: v, unprivileged.name: v} }
func per(r, nobody string) want { return want{root.name: r, unprivileged.name: nobody} }
func (w want) of(u user) string { return w[u.name] }
func (w want) holds(u user, got string) bool {
	v, ok := w[u.name]
	if !ok {
		return true
	}
	for _, alt := range strings.Split(v, "|") {
		if got == alt {
			return true
		}
	}
	return false
}
