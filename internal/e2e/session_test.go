//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The session jail (WSH_JAIL=session, the default): every command of one
// wsh run is forked inside one jail. Each test runs the same script in
// both modes; WSH_JAIL=command is the control, what wsh gave before.

// jailModes are the two values of WSH_JAIL, the session first.
var jailModes = []string{"session", "command"}

// sessionEnv is jailEnv in a session, whatever E2E_WSH_JAIL says.
var sessionEnv = append([]string{"WSH_JAIL=session"}, jailEnv...)

// loopbackPort is a port for a server inside a jail: the jail's loopback
// is its own, so nothing of the host's is in the way.
func loopbackPort() int { return 20000 + rand.IntN(20000) }

// clientPy connects to 127.0.0.1:PORT, retrying for up to 3 s, and
// prints "connected" or the errno of the last attempt.
const clientPy = `python3 -c '
import socket, sys, time, errno
end = time.time() + 3
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        print("connected"); break
    except OSError as e:
        if time.time() > end:
            print("refused", errno.errorcode.get(e.errno, e.errno)); break
        time.sleep(0.05)
' `

// TestSessionServerReachedByALaterCommand: a server started in the
// background by one command is reached by a later command of the same
// run, as in bash; with a jail per command it is not (each has its own
// loopback).
func TestSessionServerReachedByALaterCommand(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				h := userHome(t, u)
				port := loopbackPort()
				script := fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 >/dev/null 2>&1 &\n%s%d", port, clientPy, port)
				r := runWsh(t, u, h.proj, h.env(append([]string{"WSH_JAIL=" + mode}, jailEnv...)...), script)
				got := strings.TrimSpace(r.stdout)
				want := "connected"
				if mode == "command" {
					want = "refused ECONNREFUSED"
				}
				if r.status != 0 || got != want {
					t.Errorf("status %d, stdout %q, want %q\nstderr:\n%s", r.status, got, want, r.stderr)
				}
			})
		}
	}
}

// psLine is one line of `ps -e -o pid=,comm=`.
var psLine = regexp.MustCompile(`^\s*(\d+)\s+(\S+)$`)

// TestSessionSeesItsOwnProcesses: `ps -e` in a later command shows the
// background job and the session's PID 1, and no process of the host.
func TestSessionSeesItsOwnProcesses(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				token := uniqueNumber(400)
				t.Cleanup(func() { noLeftovers(t, token) })
				// The job starts as the script goes on (mvdan.cc/sh starts
				// it in a goroutine): in a session, wait until it is seen.
				wait := ""
				if mode == "session" {
					wait = "sh -c 'for i in $(seq 100); do ps -e -o comm= | grep -qx sleep && exit 0; sleep 0.05; done'\n"
				}
				r := runWsh(t, u, workDir(t, u), append([]string{"WSH_JAIL=" + mode}, jailEnv...), "sleep "+token+" &\n"+wait+"ps -e -o pid=,comm=")
				if r.status != 0 {
					t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				comms := map[string]int{}
				var lines []string
				for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					m := psLine.FindStringSubmatch(l)
					if m == nil {
						t.Fatalf("not a line of ps: %q\n%s", l, r.stdout)
					}
					if m[2] == "wsh-jail-files" && comms[m[2]] == 0 {
						// The jail's file server, which does the shell's
						// own file access there: of the jail too, once.
						comms[m[2]]++
						continue
					}
					comms[m[2]]++
					lines = append(lines, l)
				}
				switch {
				case mode == "session" && (comms["sleep"] != 1 || comms["ps"] != 1 || len(lines) != 3):
					t.Errorf("the session shows, want its PID 1, the background sleep and ps:\n%s", r.stdout)
				case mode == "command" && (comms["sleep"] != 0 || len(lines) != 2):
					t.Errorf("a jail of its own shows, want its PID 1 and ps:\n%s", r.stdout)
				}
				if !strings.HasPrefix(strings.TrimSpace(lines[0]), "1 ") {
					t.Errorf("the first process is not PID 1:\n%s", r.stdout)
				}
			})
		}
	}
}

// TestSessionRunsAreIsolated: two wsh runs at once, each a session, share
// nothing: the second cannot reach the first's server, nor see its
// processes.
func TestSessionRunsAreIsolated(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			port := loopbackPort()
			token := uniqueNumber(401)
			t.Cleanup(func() { noLeftovers(t, token) })
			first := startWsh(t, u, workDir(t, u), sessionEnv, fmt.Sprintf(
				"python3 -m http.server %d --bind 127.0.0.1 >/dev/null 2>&1 &\n%s%d\nsleep %s", port, clientPy, port, token))
			first.waitLine(t, "connected")
			r := runWsh(t, u, workDir(t, u), sessionEnv, fmt.Sprintf("%s%d\nps -e -o comm=", clientPy, port))
			if !strings.HasPrefix(r.stdout, "refused ECONNREFUSED\n") {
				t.Errorf("a second run reached the first's server:\n%s%s", r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "python3") || strings.Contains(r.stdout, "sleep") {
				t.Errorf("a second run sees the first's processes:\n%s", r.stdout)
			}
			first.cmd.Process.Signal(syscall.SIGTERM)
			first.wait(t, 10*time.Second)
		})
	}
}

// statusReadback prints what the kernel says of the command itself, and
// the namespaces it is in.
const statusReadback = `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status; readlink /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/mnt`

// TestSessionCommandIsConfined reads the kernel back in two commands of
// one run: each has every capability set empty, no_new_privs and the
// filter, and both are in the same PID, network, IPC and mount
// namespaces, which are not the host's; with a jail per command, the two
// are in different ones. The first is still running when the second
// reads (a namespace's inode number is used again once it is freed).
func TestSessionCommandIsConfined(t *testing.T) {
	host := map[string]bool{}
	for _, ns := range []string{"pid", "net", "ipc", "mnt"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		host[l] = true
	}
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				h := userHome(t, u)
				script := "sh -c \"$R; echo --; sleep 1\" &\nsleep 0.3\nsh -c \"$R\"\nwait"
				r := runWsh(t, u, h.proj, h.env(append([]string{"WSH_JAIL=" + mode, "R=" + statusReadback}, jailEnv...)...), script)
				if r.status != 0 {
					t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				a, b, ok := strings.Cut(r.stdout, "--\n")
				if !ok {
					t.Fatalf("no second readback:\n%s", r.stdout)
				}
				var nsA, nsB []string
				for i, out := range []string{a, b} {
					fields := probeFields(out)
					for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
						if fields[k] != "0000000000000000" {
							t.Errorf("command %d: %s is %q", i+1, k, fields[k])
						}
					}
					if fields["NoNewPrivs"] != "1" || fields["Seccomp"] != "2" {
						t.Errorf("command %d: NoNewPrivs %q, Seccomp %q; want 1 and 2", i+1, fields["NoNewPrivs"], fields["Seccomp"])
					}
					var ns []string
					for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
						if strings.Contains(l, ":[") && !strings.Contains(l, ":\t") {
							if host[l] {
								t.Errorf("command %d is in the host's %s", i+1, l)
							}
							ns = append(ns, l)
						}
					}
					if len(ns) != 4 {
						t.Fatalf("command %d: namespaces %q", i+1, ns)
					}
					if i == 0 {
						nsA = ns
					} else {
						nsB = ns
					}
				}
				for k := range nsA {
					same := nsA[k] == nsB[k]
					if mode == "session" && !same || mode == "command" && same {
						t.Errorf("%s: the two commands are in %s and %s", mode, nsA[k], nsB[k])
					}
				}
			})
		}
	}
}

// channelProbe looks for the session's channel from inside: the init's
// descriptor number in the command, every descriptor the command has,
// the init's descriptors through /proc and pidfd_getfd, and a new unix
// socket to reach anything like it.
const channelProbe = `python3 -c '
import ctypes, errno, os, socket, stat
def e(f):
    try:
        f(); return "ok"
    except OSError as x:
        return errno.errorcode.get(x.errno, str(x.errno))
libc = ctypes.CDLL(None, use_errno=True)
def getfd():
    pfd = os.pidfd_open(1)
    try:
        if libc.syscall(438, pfd, 8, 0) < 0:
            n = ctypes.get_errno(); raise OSError(n, os.strerror(n))
    finally:
        os.close(pfd)
socks = [fd for fd in range(3, 1024) if e(lambda: os.fstat(fd)) == "ok" and stat.S_ISSOCK(os.fstat(fd).st_mode)]
print("fstat8", e(lambda: os.fstat(8)))
print("sockets", len(socks))
print("open", e(lambda: os.open("/proc/1/fd/8", os.O_RDWR)))
print("readlink", e(lambda: os.readlink("/proc/1/fd/8")))
print("getfd", e(getfd))
print("unix", e(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)))
'`

// TestSessionChannelOutOfReach: no command of a session, in the
// foreground or the background, can find, open or inherit the channel on
// which the session's init takes commands: it has no such descriptor
// (EBADF), none of its descriptors is a socket, /proc/1/fd and
// pidfd_getfd are refused, and it cannot make a unix socket.
func TestSessionChannelOutOfReach(t *testing.T) {
	want := "fstat8 EBADF\nsockets 0\nopen EACCES\nreadlink EACCES\ngetfd EPERM\nunix EPERM\n"
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), sessionEnv, "sleep 0.2 &\n"+channelProbe+"\n("+channelProbe+") &\nwait")
			if r.status != 0 || r.stdout != want+want {
				t.Errorf("status %d\nstdout:\n%s\nwant twice:\n%s\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
			}
		})
	}
}

// sleeping says that a sleep with the argument token runs (wsh's own
// argv, the script, holds the token too).
func sleeping(token string) bool {
	for _, p := range hostProcs(token) {
		if len(p.args) == 2 && p.args[0] == "sleep" && p.args[1] == token {
			return true
		}
	}
	return false
}

// TestSessionEndsWithWsh: what a run left in the background ends when
// wsh ends: when the script is over, when wsh gets SIGTERM, and when it
// is killed with SIGKILL (the init's parent-death signal takes the whole
// jail with it).
func TestSessionEndsWithWsh(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run("script-ends/"+mode+"/"+u.name, func(t *testing.T) {
				token := uniqueNumber(402)
				r := runWsh(t, u, workDir(t, u), append([]string{"WSH_JAIL=" + mode}, jailEnv...), "sleep "+token+" &\necho started")
				if r.status != 0 || r.stdout != "started\n" {
					t.Errorf("status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				if !waitUntil(10*time.Second, func() bool { return len(hostProcs(token)) == 0 }) {
					t.Errorf("10 s after wsh exited, its background job still runs")
				}
				noLeftovers(t, token)
			})
			for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
				t.Run(sig.String()+"/"+mode+"/"+u.name, func(t *testing.T) {
					bg, fg := uniqueNumber(403), uniqueNumber(404)
					s := startWsh(t, u, workDir(t, u), append([]string{"WSH_JAIL=" + mode}, jailEnv...), "sleep "+bg+" &\nsleep "+fg)
					if !waitUntil(10*time.Second, func() bool { return sleeping(bg) && sleeping(fg) }) {
						t.Fatal("the two sleeps did not start")
					}
					fifoDirs, _ := filepath.Glob(fmt.Sprintf("/dev/shm/wsh-run-%d-*", s.cmd.Process.Pid))
					if len(fifoDirs) != 1 {
						t.Fatalf("wsh's FIFO directory: %q", fifoDirs)
					}
					s.cmd.Process.Signal(sig)
					s.wait(t, 10*time.Second)
					if !waitUntil(10*time.Second, func() bool { return len(hostProcs(bg))+len(hostProcs(fg)) == 0 }) {
						t.Errorf("10 s after wsh got %v, its jail still runs", sig)
					}
					noLeftovers(t, bg)
					noLeftovers(t, fg)
					// A wsh killed with SIGKILL cannot remove its FIFO
					// directory: the next wsh of the same user does.
					if sig == syscall.SIGKILL {
						mustRun(t, u, workDir(t, u), nil, ":")
					}
					if _, err := os.Lstat(fifoDirs[0]); err == nil {
						t.Errorf("%s is left after wsh got %v", fifoDirs[0], sig)
					}
				})
			}
		}
	}
}

// TestSessionWorkingDirectoryNoMagicLink: a command makes the shell's
// working directory a symlink to /proc/self/fd/N/.., N each descriptor
// the session's init may hold, and runs a command there with a directory
// of the host as its standard input (the shell's descriptor of it is
// sent to the init). The command never starts in the host's view: it
// reads no hidden file and writes nowhere outside the writable paths,
// by a path relative to its working directory. (Before the fix, the
// init entered the directory through the magic link, with the host's
// descriptor still open: the command read the hidden file and wrote to
// the host.)
func TestSessionWorkingDirectoryNoMagicLink(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				top := workDir(t, u)
				secretDir, err := os.MkdirTemp("/var/tmp", "wsh-e2e-secret-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(secretDir) })
				os.Chmod(secretDir, 0o755)
				writeOwned(t, u, filepath.Join(secretDir, "key"), "TOPSECRET\n")
				outside, err := os.MkdirTemp("/var/tmp", "wsh-e2e-outside-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(outside) })
				if u.uid >= 0 {
					mustChown(t, outside, u.uid)
				}
				mkdirOwned(t, u, filepath.Join(top, "d"))
				// From the stream's directory (/tmp) to the host's root,
				// through a directory of it.
				inTmp, ok := strings.CutPrefix(top, "/tmp/")
				if !ok {
					t.Fatalf("the work directory %s is not in /tmp", top)
				}
				up := strings.SplitN(inTmp, "/", 2)[0] + "/../.."
				script := `cd d
for n in 3 4 5 6 7 8 9 10 11 12 13 14; do
  sh -c "cd .. && rm -rf d && ln -s /proc/self/fd/$n/` + up + ` d"
  sh -c 'cat ` + secretDir[1:] + `/key; echo pwned > ` + outside[1:] + `/x' < /tmp 2>/dev/null
done
echo done`
				r := runWsh(t, u, top, []string{"WSH_HIDE=" + secretDir, "WSH_JAIL=" + mode}, script)
				if strings.Contains(r.stdout, "TOPSECRET") {
					t.Errorf("a command read the hidden file through the init's descriptor:\n%s", r.stdout)
				}
				if _, err := os.Lstat(filepath.Join(outside, "x")); err == nil {
					t.Errorf("a command wrote outside the writable paths through the init's descriptor")
				}
				if !strings.HasSuffix(r.stdout, "done\n") {
					t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestSessionRenewedWhenStale: a command leaves a process behind
// (setsid), which waits and then writes a hook into a repository that a
// later command makes. The session's jail, made before the repository,
// does not protect it; the command after the repository is made finds
// it unprotected, and before that command runs the repository's hooks
// and config are bound read-only in the live jail (issue 30: before, the
// session ended with what ran in it, and a new one was made): the hook
// is never written. (Before either, the session went on for the process
// left behind, and the hook landed on the host.)
func TestSessionRenewedWhenStale(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				old := time.Now().Add(-time.Hour)
				os.Chtimes(dir, old, old)
				script := `sh -c "setsid sh -c 'while [ ! -e trigger ]; do sleep 0.05; done; echo \"#!/bin/sh\" > sub/.git/hooks/pre-commit; echo planted > planted' </dev/null >/dev/null 2>&1 &"
git init -q sub
sh -c 'touch trigger'
sleep 1
echo done`
				r := runWsh(t, u, dir, append([]string{"WSH_JAIL=" + mode}, jailEnv...), script)
				if r.status != 0 || r.stdout != "done\n" {
					t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				for _, f := range []string{"sub/.git/hooks/pre-commit", "planted"} {
					if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
						t.Errorf("%s was written by the process left behind:\n%s", f, r.stderr)
					}
				}
				if strings.Contains(r.stderr, "the session's jail ends") {
					t.Errorf("the session was made anew for a repository it can protect in place:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestSessionLeftBehindEndsWithItsCommand: what a command leaves behind
// (here a daemon that called setsid) ends when the command does, as in a
// jail of its own: it cannot wait for a repository that a later command
// makes and write a hook there while the shell runs only builtins (no
// command is checked meanwhile).
func TestSessionLeftBehindEndsWithItsCommand(t *testing.T) {
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				// The loop of builtins runs for about 2 s here, the
				// process left behind waits 0.2 s after the repository.
				script := `sh -c "setsid sh -c 'while [ ! -e sub/.git/config ]; do sleep 0.02; done; sleep 0.2; echo \"#!/bin/sh\" > sub/.git/hooks/pre-commit; echo planted > planted' </dev/null >/dev/null 2>&1 &"
git init -q sub
i=0; while [ $i -lt 250000 ]; do i=$((i+1)); done
echo done`
				r := runWsh(t, u, dir, append([]string{"WSH_JAIL=" + mode}, jailEnv...), script)
				if r.status != 0 || r.stdout != "done\n" {
					t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				for _, f := range []string{"sub/.git/hooks/pre-commit", "planted"} {
					if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
						t.Errorf("%s was written by the process left behind", f)
					}
				}
			})
		}
	}
}

// TestSessionOtherRepositoryKeepsTheSession: a command in a repository
// that the session's jail was not made for gets a jail of its own (its
// protected paths are not in the session's), and the session, with the
// background job running in it, goes on.
func TestSessionOtherRepositoryKeepsTheSession(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			top := workDir(t, u)
			other := filepath.Join(filepath.Dir(top), "other-"+uniqueNumber(0))
			mkdirOwned(t, u, other)
			t.Cleanup(func() { os.RemoveAll(other) })
			mustRun(t, u, other, nil, "git init -q .")
			token := uniqueNumber(405)
			r := runWsh(t, u, top, sessionEnv, "sleep "+token+" &\ncd "+other+"\n/bin/echo in-other\ncd "+top+"\nps -e -o comm= | grep -c '^sleep$'")
			if r.status != 0 || r.stdout != "in-other\n1\n" {
				t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "the session's jail ends") {
				t.Errorf("the session was made anew for a command in another repository:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, "get a jail of their own") {
				t.Errorf("wsh did not say the command got a jail of its own:\n%s", r.stderr)
			}
			noLeftovers(t, token)
		})
	}
}

// stopperPy holds a write lease on ./prog (so that an exec of it waits)
// and stops every process named as the session's PID 1 that is not PID 1
// (PID 1's child between its fork and its exec), then lets the lease go.
const stopperPy = `python3 -c '
import fcntl, os, signal, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
fd = os.open("prog", os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
name = open("/proc/1/comm").read()
end = time.time() + 10
while time.time() < end:
    hit = False
    for p in os.listdir("/proc"):
        if p.isdigit() and p != "1" and int(p) != os.getpid():
            try:
                if open("/proc/%s/comm" % p).read() == name:
                    os.kill(int(p), signal.SIGSTOP); hit = True
            except OSError:
                pass
    if hit:
        break
    time.sleep(0.005)
time.sleep(0.3)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
'`

// TestSessionForkCannotBeStalled: a command stops PID 1's child before
// its exec (holding the exec with a lease to widen the window): PID 1
// kills that child after its fork timeout, the command's status is
// SIGKILL's, and the session goes on (before, it stalled for good, and
// wsh with it).
func TestSessionForkCannotBeStalled(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Fatalf("this test needs taskset (util-linux): %v", err)
	}
	for _, cpus := range []string{"all", "one"} {
		for _, u := range users {
			t.Run(cpus+"/"+u.name, func(t *testing.T) { forkStall(t, u, cpus, taskset) })
		}
	}
}

// forkStall is TestSessionForkCannotBeStalled as u, on all CPUs or on one
// (taskset -c 0: Go in PID 1 then has one P, which the stalled fork holds).
func forkStall(t *testing.T, u user, cpus, taskset string) {
	{
		{
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := wshCmd(ctx, u, workDir(t, u), sessionEnv, "-c", "cp /bin/true prog\n"+stopperPy+" &\nsleep 0.5\n./prog\necho \"prog $?\"\n/bin/echo after")
			if cpus == "one" {
				cmd.Args = append([]string{"taskset", "-c", "0", cmd.Path}, cmd.Args[1:]...)
				cmd.Path = taskset
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("wsh did not end within 60 s: the session stalled\n%s", out.String())
			}
			if err != nil || !strings.Contains(out.String(), "prog 137\nafter\n") {
				t.Errorf("%v after %v:\n%s", err, took.Round(time.Millisecond), out.String())
			}
		}
	}
}
