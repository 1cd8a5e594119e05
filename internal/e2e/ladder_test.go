//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ladderProbe is what a command reads back on a lower rung of the ladder:
// its status fields, a write outside the writable paths (in a directory of
// its own user's), a write in the working directory, a hidden file, a TCP
// connect to a listener on the host's loopback, ptrace, and a signal to a
// process of its own user outside wsh.
const ladderProbe = `grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status
mktemp -p %[1]s >/dev/null 2>&1 && echo outside=written || echo outside=refused
echo in > sub/f && echo work=written
cat %[2]s/secret 2>/dev/null && echo hidden=read || echo hidden=refused
python3 -c '
import ctypes, errno, os, socket
try:
    socket.create_connection(("127.0.0.1", %[3]d), timeout=2).close(); print("tcp=connected")
except OSError as e: print("tcp=" + errno.errorcode.get(e.errno, str(e.errno)))
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(0, 0, 0, 0)
print("ptrace=" + ("ok" if r == 0 else errno.errorcode[ctypes.get_errno()]))
try:
    os.kill(%[4]d, 0); print("signal=ok")
except OSError as e: print("signal=" + errno.errorcode[e.errno])
'`

// TestLadderLowerRungs: where the host refuses the full jail, commands run
// on the landlock rung (the namespaces refused at clone, mode 1; mounts
// refused in the namespace, mode 3; in a default Docker container, with
// moby's real profile and Docker's capabilities, mode 7), or on the seccomp
// rung where Landlock is absent too (mode 6), as root and as 65534, each read back from the
// kernel inside the command: no capabilities (and no bounding set, for
// root), no_new_privs, wsh's filter stacked on the harness's; on the
// landlock rung no write outside the writable paths, no hidden file, no
// signal outside the domain (the seccomp rung cannot refuse these, and
// says so); on both, no TCP (WSH_NETWORK=none) and no ptrace. The warning
// names the rung.
func TestLadderLowerRungs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, u := range users {
		outside, err := os.MkdirTemp("/var/tmp", "wsh-ladder-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(outside)
		if u.uid >= 0 {
			os.Chown(outside, u.uid, u.uid)
		}
		// A process of the command's own user, outside wsh, to signal.
		sleeper := sleeperOf(t, u)
		for _, m := range []struct {
			mode, rung string
			landlock   bool
		}{{"1", "landlock", true}, {"3", "landlock", true}, {"6", "seccomp", false}, {"7", "landlock", true}} {
			t.Run(u.name+"/mode"+m.mode, func(t *testing.T) {
				dir := workDir(t, u)
				secret := filepath.Join(dir, "private")
				mkdirOwned(t, u, secret)
				// Written in a directory of its own: on the landlock rung
				// the start directory, above the hidden path, is granted
				// entry by entry, and no new entry can be made in it, by a
				// command or by the shell (docs/sandbox.md, the ladder).
				mkdirOwned(t, u, filepath.Join(dir, "sub"))
				writeOwned(t, u, filepath.Join(secret, "secret"), "SECRET-1\n")
				script := fmt.Sprintf(ladderProbe, outside, secret, port, sleeper)
				r := runHostile(t, u, dir, []string{"WSH_HIDE=" + secret}, m.mode, script)
				got := probeFields(r.stdout)
				want := map[string]string{"CapEff": caps0, "NoNewPrivs": "1", "Seccomp": "2", "Seccomp_filters": "2",
					"work": "written", "tcp": "EACCES", "ptrace": "EPERM"}
				if u.uid < 0 {
					want["CapBnd"] = caps0
				}
				if m.landlock {
					want["outside"], want["signal"], want["hidden"] = "refused", "EPERM", "refused"
				} else {
					// Without Landlock nothing can take a path away: the
					// warning says so (TestWarning).
					want["outside"], want["signal"], want["hidden"] = "written", "ok", "read"
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %q, want %q", k, got[k], v)
					}
				}
				if !strings.Contains(r.stderr, "commands run on the "+m.rung+" rung") || strings.Count(r.stderr, "wsh: warning:") != 1 {
					t.Errorf("the warning does not name the %s rung once:\n%s", m.rung, r.stderr)
				}
				if t.Failed() {
					t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestLadderRealWork: real work runs on the landlock rung (the namespaces
// refused, mode 1; mounts refused with EACCES, mode 4; a default Docker
// container, mode 7), as root and as
// 65534: make and gcc in the working
// directory, git init, add and commit, go build with GOCACHE in the
// working directory (the home is read-only on this rung: docs/sandbox.md,
// "The ladder"), and the work lands on the host.
func TestLadderRealWork(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			writeOwned(t, u, filepath.Join(dir, "hello.c"), "#include <stdio.h>\nint main(void) { puts(\"hello from gcc\"); return 0; }\n")
			writeOwned(t, u, filepath.Join(dir, "Makefile"), "hello: hello.c\n\tcc -o hello hello.c\n")
			mkdirOwned(t, u, filepath.Join(dir, "app"))
			writeOwned(t, u, filepath.Join(dir, "app", "go.mod"), "module app\n\ngo 1.26\n")
			writeOwned(t, u, filepath.Join(dir, "app", "main.go"), "package main\n\nfunc main() { println(\"go build ok\") }\n")
			script := `set -e
make -s && ./hello
git init -q && git add hello.c Makefile && git -c user.name=w -c user.email=w@example.com commit -qm init && git log --oneline | wc -l
cd app && GOCACHE=$PWD/.gocache GOFLAGS=-buildvcs=false go build -o app . && ./app`
			for _, mode := range []string{cloneEPERM.arg, mountEACCES.arg, "7"} {
				os.RemoveAll(filepath.Join(dir, ".git"))
				os.Remove(filepath.Join(dir, "hello"))
				r := runHostile(t, u, dir, nil, mode, script)
				if r.status != 0 || r.stdout != "hello from gcc\n1\n" || !strings.Contains(r.stderr, "go build ok") {
					t.Fatalf("mode %s: status %d\nstdout:\n%s\nstderr:\n%s", mode, r.status, r.stdout, r.stderr)
				}
				if !strings.Contains(r.stderr, "landlock rung") {
					t.Errorf("mode %s: not on the landlock rung:\n%s", mode, r.stderr)
				}
				for _, p := range []string{"hello", ".git/HEAD", "app/app"} {
					if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
						t.Errorf("mode %s: %s on the host: %v", mode, p, err)
					}
				}
			}
		})
	}
}

// TestLadderFloors: WSH_REQUIRE_SANDBOX names the lowest rung it accepts.
// At or above it commands run (with the one warning); below it every
// command, and every file access of the shell's, fails with 126 and the
// script stops; 1 still means the full jail.
func TestLadderFloors(t *testing.T) {
	for _, u := range users {
		for _, c := range []struct {
			floor, mode string
			runs        bool
		}{
			{"landlock", "1", true},  // the landlock rung
			{"landlock", "6", false}, // the seccomp rung, below
			{"seccomp", "6", true},
			{"full", "1", false},
			{"1", "3", false},
		} {
			t.Run(fmt.Sprintf("%s/%s-mode%s", u.name, c.floor, c.mode), func(t *testing.T) {
				dir := workDir(t, u)
				r := runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=" + c.floor}, c.mode, "echo ran > f; /bin/cat f")
				_, err := os.Stat(filepath.Join(dir, "f"))
				switch {
				case c.runs && (r.status != 0 || r.stdout != "ran\n" || strings.Count(r.stderr, "wsh: warning:") != 1):
					t.Errorf("at the floor: status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				case !c.runs && (r.status != 126 || r.stdout != "" || strings.Contains(r.stderr, "wsh: warning:") ||
					!strings.Contains(r.stderr, "WSH_REQUIRE_SANDBOX is set, so the shell does not open f; the script stops")):
					// The redirection comes first: with no jail to open f
					// in, it fails closed, as a command does.
					t.Errorf("below the floor: status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				case !c.runs && err == nil:
					t.Errorf("below the floor: the redirection wrote f")
				case c.runs && err != nil:
					t.Errorf("the redirection did not write f: %v", err)
				}
			})
		}
	}
}

// TestLadderReview: what the review of the landlock rung broke, read back
// on it (mode 1): a hidden path that did not exist when wsh started and is
// made while a command runs stays unreadable; another terminal of the host
// (a pty of the test's, as root) cannot be opened; SysV shared memory is
// refused (the ipc group); a hidden path beneath a directory this user
// cannot list (0711) neither steps the ladder down nor is readable.
func TestLadderReview(t *testing.T) {
	ptmx, ptsFile := newPty(t)
	defer ptmx.Close()
	defer ptsFile.Close()
	pts := ptsFile.Name()
	locked, err := os.MkdirTemp("/var/tmp", "wsh-ladder-locked-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(locked)
	os.Chmod(locked, 0o711)
	os.MkdirAll(filepath.Join(locked, "secretdir"), 0o755)
	os.WriteFile(filepath.Join(locked, "secretdir", "k"), []byte("TOPSECRET\n"), 0o644)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			later, err := os.MkdirTemp("/var/tmp", "wsh-ladder-later-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(later)
			os.Chmod(later, 0o755)
			hiddenLater := filepath.Join(later, "aws")
			script := fmt.Sprintf(`sleep 1.5; cat %[1]s/credentials 2>/dev/null && echo later=read || echo later=refused
cat %[2]s/secretdir/k 2>/dev/null && echo locked=read || echo locked=refused
python3 -c '
import ctypes, errno, os
try:
    os.close(os.open(%[3]q, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)); print("pts=opened")
except OSError as e: print("pts=" + errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
r = libc.shmget(0x5eed, 4096, 0o1600)
print("shm=" + ("ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]))
'`, hiddenLater, locked, pts)
			env := []string{"WSH_HIDE=" + hiddenLater + ":" + filepath.Join(locked, "secretdir")}
			done := make(chan result, 1)
			go func() { done <- runHostile(t, u, dir, env, cloneEPERM.arg, script) }()
			// Made while the command sleeps: after wsh made its rules.
			time.Sleep(700 * time.Millisecond)
			os.MkdirAll(hiddenLater, 0o755)
			os.WriteFile(filepath.Join(hiddenLater, "credentials"), []byte("AWSKEY-1\n"), 0o644)
			r := <-done
			want := map[string]string{"later": "refused", "locked": "refused", "shm": "EPERM", "pts": "EACCES"}
			got := probeFields(r.stdout)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
			if !strings.Contains(r.stderr, "landlock rung") {
				t.Errorf("not on the landlock rung:\n%s", r.stderr)
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestLadderProtectedPathsChanged: the landlock rung cannot keep the
// protected paths read-only (no mounts), so wsh says after a command which
// it changed: a git hook planted, .git/config changed. (In the full jail
// the writes are refused: TestProtected*.)
func TestLadderProtectedPathsChanged(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			r := runHostile(t, u, dir, nil, cloneEPERM.arg, "git init -q")
			if r.status != 0 {
				t.Fatalf("git init: %d\n%s", r.status, r.stderr)
			}
			r = runHostile(t, u, dir, nil, cloneEPERM.arg, `sh -c 'echo "[core]" >> .git/config; printf "#!/bin/sh\n" > .git/hooks/pre-commit'`)
			for _, p := range []string{".git/config", ".git/hooks"} {
				want := "wsh: a command changed " + filepath.Join(dir, p) + ", a protected path (the landlock rung cannot keep it read-only)"
				if !strings.Contains(r.stderr, want) {
					t.Errorf("no word of %s:\n%s", p, r.stderr)
				}
			}
		})
	}
}

// TestLadderReviewTwo: what the second review of the landlock rung broke.
// A process a command leaves running is killed when the command ends (its
// process group; setsid and setpgid are refused), so it cannot write a
// protected path after wsh checked it; a change deep in a protected
// directory is said, and a second change to a path is said again.
func TestLadderReviewTwo(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			if r := runHostile(t, u, dir, nil, cloneEPERM.arg, "git init -q"); r.status != 0 {
				t.Fatalf("setup: %d\n%s", r.status, r.stderr)
			}
			mkdirOwned(t, u, filepath.Join(dir, ".claude"))
			mkdirOwned(t, u, filepath.Join(dir, ".claude", "hooks"))
			writeOwned(t, u, filepath.Join(dir, ".claude", "hooks", "fmt.sh"), "ok\n")
			before, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
			r := runHostile(t, u, dir, nil, cloneEPERM.arg, `sh -c '(sleep 1; echo "[alias] y=!evil" >> .git/config) </dev/null >/dev/null 2>&1 &'; python3 -c '
import os
pid = os.fork()
if pid == 0:
    try:
        os.setsid(); os._exit(0)
    except OSError:
        os._exit(1)
print("setsid=" + ("ok" if os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 0 else "refused"))
'`)
			time.Sleep(2 * time.Second)
			if after, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(after) != string(before) {
				t.Errorf("a process left running wrote .git/config after the command:\n%s", after)
			}
			if !strings.Contains(r.stdout, "setsid=refused") {
				t.Errorf("setsid was not refused: %q", r.stdout)
			}
			r = runHostile(t, u, dir, nil, cloneEPERM.arg, `sh -c 'echo evil >> .claude/hooks/fmt.sh'; sh -c 'echo "[a]" >> .git/config'; sh -c 'echo "[b]" >> .git/config'`)
			for _, p := range []string{".claude", ".git/config"} {
				if !strings.Contains(r.stderr, "wsh: a command changed "+filepath.Join(dir, p)+",") {
					t.Errorf("no word of the change in %s:\n%s", p, r.stderr)
				}
			}
			if n := strings.Count(r.stderr, "wsh: a command changed "+filepath.Join(dir, ".git/config")+","); n != 2 {
				t.Errorf(".git/config changed twice, said %d times:\n%s", n, r.stderr)
			}
		})
	}
}

// TestLadderHiddenThroughABindMount: a bind mount of a directory above a
// hidden path, reached by its other path, does not make the hidden path
// readable on the landlock rung (Landlock's rules hold for inodes), by
// either path. In a throwaway user and mount namespace, as root.
func TestLadderHiddenThroughABindMount(t *testing.T) {
	dir := t.TempDir()
	src, alias := filepath.Join(dir, "src"), filepath.Join(dir, "alias")
	os.MkdirAll(filepath.Join(src, "hid", "sub"), 0o755)
	os.Mkdir(alias, 0o755)
	os.WriteFile(filepath.Join(src, "hid", "sub", "key"), []byte("TOPSECRET\n"), 0o644)
	script := fmt.Sprintf(`mount --bind %[1]s %[2]s && cd %[3]s && WSH_HIDE=%[1]s/hid %[4]s 1 -- %[5]s -c 'cat %[1]s/hid/sub/key; cat %[2]s/hid/sub/key; echo done'`,
		src, alias, dir, hostileBin(t), wshBin)
	out, _ := exec.Command("unshare", "-Urmn", "sh", "-c", script).CombinedOutput()
	if strings.Contains(string(out), "TOPSECRET") || !strings.Contains(string(out), "done") || !strings.Contains(string(out), "landlock rung") {
		t.Errorf("the hidden file through a bind mount:\n%s", out)
	}
}

// TestLadderOwnTerminal: on the landlock rung a command whose standard
// streams are a terminal can open it again by its /dev/pts path
// (/dev/stdout, /dev/stderr), though the host's other terminals stay out
// of reach (TestLadderReview).
func TestLadderOwnTerminal(t *testing.T) {
	ptmx, pts := newPty(t)
	defer ptmx.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&out, ptmx); close(copied) }()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := hostileCmd(t, ctx, root, workDir(t, root), nil, cloneEPERM.arg, `sh -c 'echo via-stdout > /dev/stdout; echo via-stderr > /dev/stderr'`)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	err := cmd.Run()
	pts.Close()
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	s := out.String()
	if err != nil || !strings.Contains(s, "via-stdout") || !strings.Contains(s, "via-stderr") || strings.Contains(s, "Permission denied") {
		t.Errorf("%v\n%s", err, s)
	}
}

// TestLadderDoctor: wsh doctor shows each rung tried, with what refused
// it, and the rung in force: with no Landlock (mode 6), the full jail
// denied at clone, Landlock refused with ENOSYS, the seccomp rung in force.
func TestLadderDoctor(t *testing.T) {
	dir := workDir(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := hostileCmd(t, ctx, root, dir, nil, "6", "")
	cmd.Args = append(cmd.Args[:4], "doctor", "--json")
	out, _ := cmd.Output()
	var rep struct {
		Rung  string `json:"rung"`
		Rungs []struct {
			Rung, Result, Step, Errno string
		} `json:"rungs"`
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := fmt.Sprint(rep.Rungs)
	if want := "[{full denied clone EPERM} {landlock refused landlock ENOSYS} {seccomp ok  }]"; got != want || rep.Rung != "seccomp" || rep.Verdict != "would-degrade" {
		t.Errorf("rung %s, verdict %s, rungs %s; want seccomp, would-degrade, %s", rep.Rung, rep.Verdict, got, want)
	}
}

// probeFields are a ladder probe's answers: KEY=VALUE lines, and the
// KEY:<tab>VALUE lines of /proc/self/status.
func probeFields(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		} else if k, v, ok := strings.Cut(line, ":"); ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	return got
}
