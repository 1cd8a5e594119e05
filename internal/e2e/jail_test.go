//go:build linux && cgo

package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJailNetworkIsLoopbackOnly reads the jail's network devices back, from
// sysfs and from /proc/net/dev: lo alone, and up.
func TestJailNetworkIsLoopbackOnly(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			if got := mustJail(t, u, dir, nil, "ls -1 /sys/class/net"); got != "lo\n" {
				t.Errorf("/sys/class/net lists %q, want lo alone", got)
			}
			flags := strings.TrimSpace(mustJail(t, u, dir, nil, "cat /sys/class/net/lo/flags"))
			if f, err := strconv.ParseUint(flags, 0, 32); err != nil || f&syscall.IFF_UP == 0 {
				t.Errorf("lo flags = %q, want IFF_UP (0x1) set", flags)
			}
			var devs []string
			for _, l := range strings.Split(mustJail(t, u, dir, nil, "cat /proc/self/net/dev"), "\n")[2:] {
				if name, _, ok := strings.Cut(l, ":"); ok {
					devs = append(devs, strings.TrimSpace(name))
				}
			}
			if !slices.Equal(devs, []string{"lo"}) {
				t.Errorf("/proc/self/net/dev lists %q, want lo alone", devs)
			}
		})
	}
}

// TestJailRootIsReadOnly creates files with real system calls: under /etc
// and /usr the kernel answers EROFS, in the working directory the file is
// made and is on the host afterwards.
func TestJailRootIsReadOnly(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			for _, p := range []string{"/etc/wsh-e2e-" + uniqueNumber(0), "/usr/wsh-e2e-" + uniqueNumber(0)} {
				t.Cleanup(func() { os.Remove(p) }) // should the jail let it through
				if got := mustJail(t, u, dir, nil, probe+" create "+p); got != "EROFS\n" {
					t.Errorf("open(%s, O_CREAT) in the jail: %q, want EROFS", p, got)
				}
			}
			r := runWsh(t, u, dir, jailEnv, "touch /etc/wsh-e2e-touch")
			t.Cleanup(func() { os.Remove("/etc/wsh-e2e-touch") })
			if r.status == 0 || !strings.Contains(r.stderr, "Read-only file system") {
				t.Errorf("touch /etc/...: status %d, stderr %q; want a failure with Read-only file system", r.status, r.stderr)
			}
			if got := mustJail(t, u, dir, nil, "sh -c 'echo x > ./f' && cat f"); got != "x\n" {
				t.Errorf("cat f in the jail: %q, want x", got)
			}
			checkHostFile(t, u, filepath.Join(dir, "f"), "x\n")
			checkMountFlags(t, mustJail(t, u, dir, nil, "cat /proc/self/mountinfo"), dir)
		})
	}
}

// checkHostFile checks from the host that a file the jail wrote is there,
// with its content, owned by u.
func checkHostFile(t *testing.T, u user, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("on the host, %s: %q, %v; want %q", path, b, err, want)
		return
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; int(uid) != max(u.uid, 0) {
		t.Errorf("on the host, %s is owned by uid %d, want %d", path, uid, max(u.uid, 0))
	}
}

// checkMountFlags checks the per-mount flags in the jail's mountinfo: the
// mounts that hold /, /etc and /usr are read-only, the one that holds dir
// is read-write.
func checkMountFlags(t *testing.T, mountinfo, dir string) {
	t.Helper()
	for path, want := range map[string]string{"/": "ro", "/etc": "ro", "/usr": "ro", dir: "rw"} {
		if got := mountOf(mountinfo, path); !slices.Contains(got, want) {
			t.Errorf("mountinfo: the mount holding %s has options %q, want %s", path, got, want)
		}
	}
}

// mountOf returns the per-mount options of the mount that holds path: the
// last one listed (the top of a stack) with the longest mount point above it.
func mountOf(mountinfo, path string) []string {
	var best string
	var opts []string
	for _, l := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		mp := f[4]
		under := mp == "/" || path == mp || strings.HasPrefix(path, mp+"/")
		if under && len(mp) >= len(best) {
			best, opts = mp, strings.Split(f[5], ",")
		}
	}
	return opts
}

// TestJailSeesOnlyItsProcesses reads the jail's /proc: its own init and the
// target, nothing of the host's, and kill(2) cannot find a host pid.
func TestJailSeesOnlyItsProcesses(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			var self string
			var pids []string
			for _, l := range strings.Split(strings.TrimSpace(mustJail(t, u, dir, nil, probe+" pids")), "\n") {
				switch k, v, _ := strings.Cut(l, " "); k {
				case "self":
					self = v
				case "proc":
					// The jail's file server (the shell's own file
					// access, done in the jail) is of the jail too.
					if pid, comm, _ := strings.Cut(v, " "); comm != "wsh-jail-files" {
						pids = append(pids, pid)
					}
				}
			}
			if want := []string{"1", self}; !slices.Equal(pids, want) {
				t.Errorf("/proc in the jail lists pids %q, want %q (the init and the probe, and the file server)", pids, want)
			}
			if got := mustJail(t, u, dir, nil, "cat /proc/1/cmdline"); !strings.HasPrefix(got, "wsh-jail-init\x00") {
				t.Errorf("/proc/1/cmdline in the jail = %q, want wsh-jail-init", got)
			}
			host := strconv.Itoa(os.Getpid())
			if got := mustJail(t, u, dir, nil, probe+" kill "+host); got != "ESRCH\n" {
				t.Errorf("kill(%s, 0) of the test's host pid in the jail: %q, want ESRCH", host, got)
			}
		})
	}
}

// TestJailCannotReachHostLoopback connects from the jail to a listener on
// the host's 127.0.0.1: refused, and the listener accepts nothing. The
// same connect without the jail gets through, so the refusal is the jail's.
func TestJailCannotReachHostLoopback(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			script := probe + " connect " + ln.Addr().String()
			dir := workDir(t, u)
			if got := mustJail(t, u, dir, nil, script); got != "ECONNREFUSED\n" {
				t.Errorf("connect to the host's %s from the jail: %q, want ECONNREFUSED", ln.Addr(), got)
			}
			if accepted(t, ln) {
				t.Errorf("the host's listener accepted a connection from the jail")
			}
			if got := mustRun(t, u, dir, []string{"WSH_NO_SANDBOX=1"}, script); got != "ok\n" {
				t.Errorf("control: connect with WSH_NO_SANDBOX=1: %q, want ok", got)
			}
			if !accepted(t, ln) {
				t.Errorf("control: the listener accepted nothing with WSH_NO_SANDBOX=1")
			}
		})
	}
}

// accepted reports whether ln has a connection waiting, within 200ms.
func accepted(t *testing.T, ln net.Listener) bool {
	t.Helper()
	tl := ln.(*net.TCPListener)
	tl.SetDeadline(time.Now().Add(200 * time.Millisecond))
	c, err := tl.Accept()
	if err == nil {
		c.Close()
		return true
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal(err)
	}
	return false
}

// TestJailClosesInheritedDescriptors starts wsh with descriptors 3, 4 and 5
// open and inheritable (a file, a listening socket, a pipe): the target in
// the jail finds none of them, nor the jail's report pipe.
func TestJailClosesInheritedDescriptors(t *testing.T) {
	probe := probeBin(t)
	extra := inheritable(t)
	// The control: the probe started with the same descriptors sees them.
	ctl := exec.Command(probe, "fds")
	ctl.ExtraFiles = extra
	if out, err := ctl.Output(); err != nil || !strings.HasPrefix(string(out), "0 1 2 3=") {
		t.Fatalf("control: the probe with 3 extra descriptors saw %q, %v", out, err)
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := wshCmd(ctx, u, workDir(t, u), jailEnv, "-c", probe+" fds; ls /proc/self/fd")
			cmd.ExtraFiles = extra
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("wsh: %v\n%s", err, out)
			}
			fds, ls, _ := strings.Cut(string(out), "\n")
			if fds != "0 1 2" {
				t.Errorf("fcntl(F_GETFD) in the jail finds fds %q open, want 0 1 2", fds)
			}
			// ls sees its own descriptor of /proc/self/fd as well: 3.
			if got := strings.Fields(ls); !slices.Equal(got, []string{"0", "1", "2", "3"}) {
				t.Errorf("ls /proc/self/fd in the jail: %q, want 0 1 2 3", got)
			}
		})
	}
}

// inheritable returns a file, a listening socket and a pipe's read end, all
// without close-on-exec once they are passed as ExtraFiles.
func inheritable(t *testing.T) []*os.File {
	t.Helper()
	f, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sock, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); sock.Close(); pr.Close(); pw.Close() })
	return []*os.File{f, sock, pr}
}

// TestJailEnvironment reads the target's environment from
// /proc/self/environ: exactly what wsh was given, as the script changed it
// (an export added, an unset removed, a plain assignment not exported), and
// nothing of wsh's own.
func TestJailEnvironment(t *testing.T) {
	// What wsh adds, with a network of the jail's own (docs/sandbox.md,
	// "Network"): the proxy, in place of any the script names.
	proxy := []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
		"npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY"}
	var added []string
	for _, k := range proxy {
		added = append(added, k+"=http://127.0.0.1:900")
	}
	added = append(added, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1", "npm_config_noproxy=localhost,127.0.0.1,::1")
	for _, network := range []string{"none", "host"} {
		given := append([]string{"E2E_GIVEN=a b=c", "E2E_DROP=x", "WSH_NETWORK=" + network, "HTTPS_PROXY=http://host.example:3128"}, jailEnv...)
		script := "export E2E_FOO=bar; E2E_LOCAL=1; unset E2E_DROP; cat /proc/self/environ"
		for _, u := range users {
			t.Run(network+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				var want []string
				for _, kv := range wshCmd(context.Background(), u, dir, given).Env {
					if !strings.HasPrefix(kv, "E2E_DROP=") && (network == "host" || !strings.HasPrefix(kv, "HTTPS_PROXY=")) {
						want = append(want, kv)
					}
				}
				want = append(want, "E2E_FOO=bar")
				if network == "none" {
					want = append(append(want, added...), "PIP_RETRIES=0")
				}
				got := strings.Split(strings.TrimSuffix(mustJail(t, u, dir, given, script), "\x00"), "\x00")
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("the environment in the jail:\n%q\nwant:\n%q", got, want)
				}
			})
		}
	}
}

// TestJailSignalDispositions reads the target's signal mask and ignored
// signals from /proc/self/status: a jailed command starts with nothing
// blocked and nothing ignored (the init catches the signals it drops, so
// none reaches the target ignored), except SIGHUP or SIGINT when wsh itself
// was started with it ignored (nohup; a background job), which the target
// inherits as it would from a shell.
func TestJailSignalDispositions(t *testing.T) {
	script := "grep -E '^Sig(Blk|Ign):' /proc/self/status"
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			out := mustJail(t, u, dir, nil, script)
			if got := statusField(t, out, "SigBlk"); got != "0000000000000000" {
				t.Errorf("SigBlk %s, want none blocked", got)
			}
			if got := statusField(t, out, "SigIgn"); got != "0000000000000000" {
				t.Errorf("SigIgn %s, want none ignored", got)
			}

			// wsh started with SIGHUP ignored: sh's trap "" sets SIG_IGN,
			// which exec keeps.
			cmd := wshCmd(context.Background(), u, dir, jailEnv)
			cmd.Path = "/bin/sh"
			cmd.Args = []string{"sh", "-c", `trap "" HUP; exec "$0" -c "$1"`, wshBin, script}
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("wsh under trap \"\" HUP: %v", err)
			}
			if got := statusField(t, string(b), "SigIgn"); got != "0000000000000001" {
				t.Errorf("under nohup, SigIgn %s, want only SIGHUP (1)", got)
			}

			// And SIGINT (a background job of a non-interactive shell).
			cmd = wshCmd(context.Background(), u, dir, jailEnv)
			cmd.Path = "/bin/sh"
			cmd.Args = []string{"sh", "-c", `trap "" INT; exec "$0" -c "$1"`, wshBin, script}
			if b, err = cmd.Output(); err != nil {
				t.Fatalf("wsh under trap \"\" INT: %v", err)
			}
			if got := statusField(t, string(b), "SigIgn"); got != "0000000000000002" {
				t.Errorf("with SIGINT ignored, SigIgn %s, want only SIGINT (2)", got)
			}
		})
	}
}
