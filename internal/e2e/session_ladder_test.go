//go:build linux && cgo

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A session on the ladder's lower rungs: where the host refuses the
// namespaces, the session is a zygote in the host's namespaces, confined
// as a command's own init is (no_new_privs, no capabilities, the rung's
// Landlock domain and filter), which forks every command of the run.
// Each test runs on the landlock rung (hostile mode 1) and the seccomp
// rung (mode 6), in both jail modes; WSH_JAIL=command is the control.

// lowerRungs are the hostile modes that put wsh on each lower rung.
var lowerRungs = []struct{ name, mode string }{{"landlock", cloneEPERM.arg}, {"seccomp", "6"}}

// statusOf prints, of the /proc/PID/status it is given, the parent and
// what confines the process.
const statusOf = `grep -E '^(PPid|NoNewPrivs|Seccomp|CapEff|CapPrm):' `

// TestLadderSessionForksCommands: in a session on a lower rung, two
// commands have the same parent, which is not wsh: the zygote. Each reads
// the kernel back: no_new_privs, the filter, no capabilities; so does
// the zygote, read by the command from /proc. In a jail per command each
// command's parent is wsh (its init became the command).
func TestLadderSessionForksCommands(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, mode := range jailModes {
			for _, u := range users {
				t.Run(rung.name+"/"+mode+"/"+u.name, func(t *testing.T) {
					script := "echo wsh=$$\n" + statusOf + "/proc/self/status\n" + statusOf + "/proc/self/status\n" +
						`sh -c 'grep -E "^(PPid|NoNewPrivs|Seccomp|CapEff|CapPrm):" /proc/$PPID/status'`
					r := runHostile(t, u, workDir(t, u), []string{"WSH_JAIL=" + mode}, rung.mode, script)
					if r.status != 0 {
						t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
					}
					var wshPid string
					var ppids []string
					var procs []map[string]string // each process read, field by field
					for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
						if v, ok := strings.CutPrefix(l, "wsh="); ok {
							wshPid = v
							continue
						}
						f := strings.Fields(l)
						if len(f) != 2 {
							t.Fatalf("not a status line: %q\n%s", l, r.stdout)
						}
						if f[0] == "PPid:" {
							ppids = append(ppids, f[1])
							procs = append(procs, map[string]string{})
						}
						procs[len(procs)-1][f[0]] = f[1]
					}
					// Three processes read: two commands, and the process
					// that forked the third command's sh: the zygote in a
					// session, wsh itself with a jail per command.
					confined := func(p map[string]string) bool {
						return p["NoNewPrivs:"] == "1" && p["Seccomp:"] == "2" && p["CapEff:"] == "0000000000000000" && p["CapPrm:"] == "0000000000000000"
					}
					if len(procs) != 3 || !confined(procs[0]) || !confined(procs[1]) || mode == "session" && !confined(procs[2]) {
						t.Fatalf("not every process read is confined:\n%s", r.stdout)
					}
					switch {
					case ppids[0] != ppids[1]:
						t.Errorf("two commands with different parents: %v", ppids)
					case mode == "session" && ppids[0] == wshPid:
						t.Errorf("in a session, a command's parent is wsh (%s), not the zygote", wshPid)
					case mode == "command" && ppids[0] != wshPid:
						t.Errorf("in a jail per command, a command's parent is %s, not wsh (%s)", ppids[0], wshPid)
					}
				})
			}
		}
	}
}

// zygoteChannelProbe is channelProbe for a lower rung's zygote, the
// command's parent: it has no descriptor 8 (EBADF) and no socket, the
// zygote's descriptors cannot be opened or read through /proc (it is not
// dumpable), nor taken with pidfd_getfd, and the zygote cannot be traced.
const zygoteChannelProbe = `python3 -c '
import ctypes, errno, os, stat
def e(f):
    try:
        f(); return "ok"
    except OSError as x:
        return errno.errorcode.get(x.errno, str(x.errno))
libc = ctypes.CDLL(None, use_errno=True)
z = os.getppid()
def call(*a):
    if libc.syscall(*a) < 0:
        n = ctypes.get_errno(); raise OSError(n, os.strerror(n))
def getfd():
    pfd = os.pidfd_open(z)
    try:
        call(438, pfd, 8, 0)
    finally:
        os.close(pfd)
socks = [fd for fd in range(3, 1024) if e(lambda: os.fstat(fd)) == "ok" and stat.S_ISSOCK(os.fstat(fd).st_mode)]
print("fstat8", e(lambda: os.fstat(8)))
print("sockets", len(socks))
print("open", e(lambda: os.open("/proc/%d/fd/8" % z, os.O_RDWR)))
print("readlink", e(lambda: os.readlink("/proc/%d/fd/8" % z)))
print("mem", e(lambda: os.open("/proc/%d/mem" % z, os.O_RDWR)))
print("getfd", e(getfd))
print("ptrace", e(lambda: call(101, 16, z, 0, 0)))
'`

// TestLadderSessionChannelOutOfReach: no command of a lower rung's
// session, in the foreground or the background, can find, open or
// inherit the zygote's channel, nor take the zygote over.
func TestLadderSessionChannelOutOfReach(t *testing.T) {
	want := "fstat8 EBADF\nsockets 0\nopen EACCES\nreadlink EACCES\nmem EACCES\ngetfd EPERM\nptrace EPERM\n"
	for _, rung := range lowerRungs {
		for _, u := range users {
			t.Run(rung.name+"/"+u.name, func(t *testing.T) {
				r := runHostile(t, u, workDir(t, u), []string{"WSH_JAIL=session"}, rung.mode,
					"sleep 0.2 &\n"+zygoteChannelProbe+"\n("+zygoteChannelProbe+") &\nwait")
				if r.status != 0 || r.stdout != want+want {
					t.Errorf("status %d\nstdout:\n%s\nwant twice:\n%s\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
				}
			})
		}
	}
}

// TestLadderSessionLeftBehindEndsWithItsCommand: what a command leaves
// running ends when it does, before the next command: a job in its
// process group, and a process that tried to leave the group
// (setpgid(0, 0), refused) and was orphaned. A background job of the
// script runs on. In both modes the command's group is killed.
func TestLadderSessionLeftBehindEndsWithItsCommand(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, mode := range jailModes {
			for _, u := range users {
				t.Run(rung.name+"/"+mode+"/"+u.name, func(t *testing.T) {
					job, inGroup, escaped := uniqueNumber(410), uniqueNumber(411), uniqueNumber(412)
					t.Cleanup(func() {
						for _, tok := range []string{job, inGroup, escaped} {
							noLeftovers(t, tok)
						}
					})
					script := fmt.Sprintf(`sleep %s &
sh -c 'sleep %s &'
python3 -c '
import os, sys
if os.fork() == 0:
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    os.execvp("sleep", ["sleep", sys.argv[1]])
' %s
i=0; while ! pgrep -x -f "sleep %s" >/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
for t in %s %s %s; do pgrep -x -f "sleep $t" >/dev/null && echo "$t runs" || echo "$t gone"; done`, job, inGroup, escaped, job, job, inGroup, escaped)
					// The background job starts on its own: the script waits
					// (bounded) for it to run before it looks.
					r := runHostile(t, u, workDir(t, u), []string{"WSH_JAIL=" + mode}, rung.mode, script)
					want := fmt.Sprintf("%s runs\n%s gone\n%s gone\n", job, inGroup, escaped)
					if r.status != 0 || r.stdout != want {
						t.Errorf("status %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
					}
				})
			}
		}
	}
}

// forkLoopPy is the second review's attack on the first lower-rung
// session: a loop that forks and exits, each generation trying to make a
// process group of its own, so that no scan of /proc finds a live pid of
// it and no kill of its first group reaches it. Given a token (in its
// argv, for pgrep) and a file, it writes the file once it has looped for
// 1 s, as a process left behind would write a git hook after wsh's check.
// Its first process exits after 0.2 s, ending its command. A third
// argument is the pause between generations, in seconds.
const forkLoopPy = `python3 -c '` + forkLoopSrc + `' `

const forkLoopSrc = `import os, sys, time
start = time.time()
if os.fork() == 0:
    while True:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        if time.time() - start > 1:
            open(sys.argv[2], "w").write("planted")
            os._exit(0)
        time.sleep(float(sys.argv[3]))
        if os.fork() != 0:
            os._exit(0)
time.sleep(0.2)`

// groupProbePy prints what the kernel answers a command that tries to
// leave its process group: setpgid(0, 0), setsid, and clone with
// CLONE_PARENT (a child of its parent's, the zygote's fork thread, which
// the zygote would take for its own fork's).
const groupProbePy = `python3 -c '
import ctypes, errno, os
def show(name, f):
    try:
        f()
        print(name, "allowed", flush=True)
    except OSError as e:
        print(name, errno.errorcode[e.errno], flush=True)
show("setpgid", lambda: os.setpgid(0, 0))
show("setsid", os.setsid)
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0) # clone(CLONE_PARENT|SIGCHLD), x86_64
if r == 0:
    os._exit(0)
print("clone-parent", "allowed" if r > 0 else errno.errorcode[ctypes.get_errno()], flush=True)
if os.fork() == 0:
    show("child-setpgid", lambda: os.setpgid(0, 0))
    os._exit(0)
os.wait()
'`

// countLeft is a script line that prints label and how many processes
// pattern matches (pgrep -f) once none does, or after half a second. A
// process killed as its command ended may not have died yet when the
// next command runs (SIGKILL takes effect when it is next scheduled, later
// on a loaded machine): what it could still do is what the tests' files
// show, written or not.
func countLeft(label, pattern string) string {
	return `n=1; i=0; while [ $i -lt 10 ]; do n=$(pgrep -c -f '` + pattern + `'); [ "$n" = 0 ] && break; sleep 0.05; i=$((i+1)); done; echo ` + label + ` $n`
}

// TestLadderSessionGroupHolds: no process of a command can leave its
// process group: setpgid and setsid are refused (EPERM, read back) in a
// command and in its child, and in a session so is clone(CLONE_PARENT).
// A loop that forks and exits, trying setpgid at each generation (the
// attack that broke the first lower-rung session), ends with its command
// and never writes. With an init per command, the same but CLONE_PARENT.
func TestLadderSessionGroupHolds(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, mode := range jailModes {
			for _, u := range users {
				t.Run(rung.name+"/"+mode+"/"+u.name, func(t *testing.T) {
					t.Parallel() // mostly waiting: their waits overlap
					dir := workDir(t, u)
					token := uniqueNumber(419)
					t.Cleanup(func() { noLeftovers(t, token) })
					script := groupProbePy + "\n" + forkLoopPy + token + " loop-planted 0.005\n" +
						countLeft("after", "^python3 .*"+token) + "\nsleep 1.5"
					r := runHostile(t, u, dir, []string{"WSH_JAIL=" + mode}, rung.mode, script)
					clone := "EPERM"
					if mode == "command" {
						clone = "allowed" // no zygote: harmless
					}
					want := "setpgid EPERM\nsetsid EPERM\nclone-parent " + clone + "\nchild-setpgid EPERM\nafter 0\n"
					if r.status != 0 || r.stdout != want {
						t.Errorf("status %d, stdout %q, want %q\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
					}
					if _, err := os.Stat(filepath.Join(dir, "loop-planted")); err == nil {
						t.Error("the fork loop wrote after its command ended")
					}
				})
			}
		}
	}
}

// TestLadderSessionEndsWithWsh: what a lower rung's session runs ends
// when wsh does: at the script's end, and when wsh is killed with
// SIGTERM or SIGKILL (the zygote sees its channel end).
func TestLadderSessionEndsWithWsh(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, u := range users {
			t.Run("script-ends/"+rung.name+"/"+u.name, func(t *testing.T) {
				token := uniqueNumber(413)
				r := runHostile(t, u, workDir(t, u), []string{"WSH_JAIL=session"}, rung.mode, "sleep "+token+" &\necho started")
				if r.status != 0 || r.stdout != "started\n" {
					t.Errorf("status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				if !waitUntil(10*time.Second, func() bool { return len(hostProcs(token)) == 0 }) {
					t.Errorf("10 s after wsh exited, its background job still runs")
				}
				noLeftovers(t, token)
			})
			for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
				t.Run(sig.String()+"/"+rung.name+"/"+u.name, func(t *testing.T) {
					bg, fg := uniqueNumber(414), uniqueNumber(415)
					s := startCmd(t, hostileCmd(t, context.Background(), u, workDir(t, u), []string{"WSH_JAIL=session"}, rung.mode,
						"sleep "+bg+" &\nsleep "+fg))
					if !waitUntil(10*time.Second, func() bool { return sleeping(bg) && sleeping(fg) }) {
						t.Fatal("the two sleeps did not start")
					}
					s.cmd.Process.Signal(sig)
					s.wait(t, 10*time.Second)
					if !waitUntil(10*time.Second, func() bool { return len(hostProcs(bg))+len(hostProcs(fg)) == 0 }) {
						t.Errorf("10 s after wsh got %v, its session still runs", sig)
					}
					noLeftovers(t, bg)
					noLeftovers(t, fg)
				})
			}
		}
	}
}

// TestLadderSessionSeesANewEntry: the landlock rung grants the entries
// of a directory above a hidden path one by one, and Landlock adds no
// rule to a domain in force. A file made on the host in such a directory
// after the session's zygote was made is read by a later command: the
// session is made anew for it. A background job of the old one runs on,
// and the old zygote ends once that job has ended, while wsh runs on.
func TestLadderSessionSeesANewEntry(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			mkdirOwned(t, u, filepath.Join(dir, "secret"))
			mkdirOwned(t, u, filepath.Join(dir, "sub"))
			job := uniqueNumber(416)
			t.Cleanup(func() { noLeftovers(t, job) })
			s := startCmd(t, hostileCmd(t, context.Background(), u, dir, []string{"WSH_JAIL=session", "WSH_HIDE=" + filepath.Join(dir, "secret")}, cloneEPERM.arg,
				`sleep `+job+` &
sh -c 'echo old=$PPID'
echo ready
while [ ! -e sub/go ]; do sleep 0.05; done
cat new
pgrep -x -f "sleep `+job+`" >/dev/null && echo job runs
kill %1
wait
echo job ended
while [ ! -e sub/go2 ]; do sleep 0.05; done
echo done`))
			s.waitLine(t, "ready")
			var old int
			for _, l := range s.out {
				if v, ok := strings.CutPrefix(l, "old="); ok {
					old, _ = strconv.Atoi(v)
				}
			}
			if old <= 1 {
				t.Fatalf("no zygote's pid:\n%s", strings.Join(s.out, "\n"))
			}
			// Hours old, as a user's files are.
			writeOwned(t, u, filepath.Join(dir, "new"), "made on the host\n")
			hoursAgo := time.Now().Add(-3 * time.Hour)
			os.Chtimes(filepath.Join(dir, "new"), hoursAgo, hoursAgo)
			writeOwned(t, u, filepath.Join(dir, "sub", "go"), "")
			s.waitLine(t, "made on the host")
			s.waitLine(t, "job runs")
			s.waitLine(t, "job ended")
			if !waitUntil(10*time.Second, func() bool { _, err := os.Stat(fmt.Sprintf("/proc/%d", old)); return err != nil }) {
				t.Errorf("the old zygote, %d, runs on with nothing in it", old)
			}
			writeOwned(t, u, filepath.Join(dir, "sub", "go2"), "")
			s.waitLine(t, "done")
			if status, out := s.wait(t, 30*time.Second); status != 0 || !strings.Contains(out, "later commands get a new session") {
				t.Errorf("status %d, or no word of the new session:\n%s", status, out)
			}
		})
	}
}

// chainPy makes a chain of N processes below the command, each in a
// process group of its own where that is allowed (setpgid(0, 0)); the
// command exits once the chain is made (every level has let go of the
// pipe's write end), and the deepest writes chain-planted after 3 s if it
// is still alive.
const chainPy = `python3 -c '
import os, sys, time
def level(n, w):
    if n == 0:
        os.close(w)
        time.sleep(1.5)
        open("chain-planted", "w").write("x")
        os._exit(0)
    if os.fork() == 0:
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        level(n - 1, w)
    os.close(w)
    time.sleep(30)
    os._exit(0)
r, w = os.pipe()
if os.fork() == 0:
    os.close(r)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    level(int(sys.argv[1]), w)
os.close(w)
os.read(r, 1)
' `

// TestLadderSessionDeepChainEnds: a chain of 40 processes, each trying
// to make a group of its own (refused), left by a command, is gone before
// the next command (its group is killed whole), and never writes.
func TestLadderSessionDeepChainEnds(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, mode := range jailModes {
			for _, u := range users {
				t.Run(rung.name+"/"+mode+"/"+u.name, func(t *testing.T) {
					t.Parallel() // mostly waiting: their waits overlap
					dir := workDir(t, u)
					token := uniqueNumber(417)
					t.Cleanup(func() { noLeftovers(t, token) })
					r := runHostile(t, u, dir, []string{"WSH_JAIL=" + mode}, rung.mode,
						chainPy+"40 "+token+"\n"+countLeft("alive", "^python3 .*"+token)+"\nsleep 2")
					if r.status != 0 || r.stdout != "alive 0\n" {
						t.Errorf("status %d, stdout %q, want %q\nstderr:\n%s", r.status, r.stdout, "alive 0\n", r.stderr)
					}
					if _, err := os.Stat(filepath.Join(dir, "chain-planted")); err == nil {
						t.Error("the deepest of the chain wrote after its command ended")
					}
				})
			}
		}
	}
}

// TestLadderSessionZygoteKilled: a command of a session kills its zygote
// (on the landlock rung it is in the commands' Landlock domain; on the
// seccomp rung signals are not confined). wsh then ends every process of
// the session before it says anything of them: a job running then is said
// to have been killed only once it is, and what the killer left behind
// never writes, a loop that forks and exits too (which a scan of /proc
// may never see alive: the kill of its group ends it). Later commands get an init of their own. With an init per
// command on the landlock rung, the kill of wsh is refused.
func TestLadderSessionZygoteKilled(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, mode := range jailModes {
			if mode == "command" && rung.name == "seccomp" {
				continue // there the command's parent is wsh itself, which it would kill
			}
			for _, u := range users {
				t.Run(rung.name+"/"+mode+"/"+u.name, func(t *testing.T) {
					dir := workDir(t, u)
					token := uniqueNumber(418)
					t.Cleanup(func() { noLeftovers(t, token) })
					script := "cat > loop.py <<'EOF'\n" + forkLoopSrc + "\nEOF\n" +
						`sh -c 'sleep 2; echo ran > victim-ran' & v=$!
sleep 0.3
sh -c '(sleep 2; echo planted > planted) >/dev/null 2>&1 </dev/null & sleep ` + token + ` & python3 loop.py ` + token + ` loop-planted 0 & sleep 0.5; kill -9 $PPID 2>/dev/null'
wait $v; echo victim=$?
echo after $(pgrep -c -f "^(sleep|python3 loop.py) ` + token + `")
sleep 2`
					r := runHostile(t, u, dir, []string{"WSH_JAIL=" + mode}, rung.mode, script)
					want := "victim=137\nafter 0\n"
					if mode == "command" {
						want = "victim=0\nafter 0\n"
					}
					if r.status != 0 || r.stdout != want {
						t.Errorf("status %d, stdout %q, want %q\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
					}
					_, ranErr := os.Stat(filepath.Join(dir, "victim-ran"))
					if mode == "session" && ranErr == nil {
						t.Error("the job said killed ran to its end")
					}
					for _, f := range []string{"planted", "loop-planted"} {
						if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
							t.Errorf("what the zygote's killer left behind wrote %s after it", f)
						}
					}
				})
			}
		}
	}
}

// TestLadderSessionWritableMovedAway: on the landlock rung a writable
// path is granted by the inode it led to when the zygote was made. One
// moved away on the host and made anew during the run gets a new session:
// the next command writes to the new directory.
func TestLadderSessionWritableMovedAway(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			// Not beneath /tmp, which is writable in any case.
			parent, err := os.MkdirTemp("/var/tmp", "wsh-e2e-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(parent) })
			os.Chmod(parent, 0o755)
			dir, wr := workDir(t, u), filepath.Join(parent, "wr")
			mkdirOwned(t, u, wr)
			mkdirOwned(t, u, filepath.Join(dir, "sub"))
			s := startCmd(t, hostileCmd(t, context.Background(), u, dir, []string{"WSH_JAIL=session", "WSH_WRITABLE=" + wr}, cloneEPERM.arg,
				`true
echo ready
while [ ! -e sub/go ]; do sleep 0.05; done
sh -c 'echo new > `+wr+`/c && echo wrote-new'`))
			s.waitLine(t, "ready")
			if err := os.Rename(wr, wr+".old"); err != nil {
				t.Fatal(err)
			}
			mkdirOwned(t, u, wr)
			writeOwned(t, u, filepath.Join(dir, "sub", "go"), "")
			s.waitLine(t, "wrote-new")
			s.wait(t, 30*time.Second)
		})
	}
}

// TestLadderSessionNoListener: where a filter in force already has a
// listener (hostile mode 8, as under a supervisor that intercepts system
// calls), the kernel gives the zygote's filter none. The rung stands
// without a session: wsh says so, once, and each command gets an init of
// its own (its parent is wsh), confined as ever.
func TestLadderSessionNoListener(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			script := "echo wsh=$$\n" + statusOf + "/proc/self/status\n" + statusOf + "/proc/self/status"
			r := runHostile(t, u, workDir(t, u), []string{"WSH_JAIL=session"}, "8", script)
			if r.status != 0 {
				t.Fatalf("status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			said := "wsh: no session on the landlock rung: the kernel refused its seccomp listener (device or resource busy); commands get an init of their own\n"
			if strings.Count(r.stderr, said) != 1 {
				t.Errorf("stderr does not say once why there is no session:\n%s", r.stderr)
			}
			wsh, _, _ := strings.Cut(strings.TrimPrefix(r.stdout, "wsh="), "\n")
			if strings.Count(r.stdout, "PPid:\t"+wsh+"\n") != 2 || strings.Count(r.stdout, "NoNewPrivs:\t1\n") != 2 ||
				strings.Count(r.stdout, "Seccomp:\t2\n") != 2 || strings.Count(r.stdout, "CapEff:\t0000000000000000\n") != 2 {
				t.Errorf("each command's parent is not wsh (%s), or a command is not confined:\n%s", wsh, r.stdout)
			}
		})
	}
}

// forkLoopC is a fork-and-exit loop that no scan of /proc keeps up with:
// each generation forks and exits at once. Every 20 ms, for 8 s, one
// generation appends the time (CLOCK_REALTIME, seconds.nanoseconds) to
// the file its first argument names: the last line is the last moment a
// process of the loop ran.
const forkLoopC = `#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static long long ms(struct timespec t) { return t.tv_sec * 1000LL + t.tv_nsec / 1000000; }
int main(int argc, char **argv) {
	struct timespec t0, t, r;
	long long last = -1000;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (ms(t) - ms(t0) >= 8000)
			_exit(0);
		if (ms(t) - last >= 20) {
			clock_gettime(CLOCK_REALTIME, &r);
			dprintf(fd, "%lld.%09ld\n", (long long)r.tv_sec, r.tv_nsec);
			last = ms(t);
		}
		if (fork() != 0)
			_exit(0);
	}
}
`

// lastRan is the last time a forkLoopC wrote to marks, and whether it
// wrote at all.
func lastRan(t *testing.T, marks string) (time.Time, bool) {
	t.Helper()
	b, err := os.ReadFile(marks)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) == 0 {
		return time.Time{}, false
	}
	sec, nsec, ok := strings.Cut(lines[len(lines)-1], ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	ns, err2 := strconv.ParseInt(nsec, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("%s: a line that is no time: %q", marks, lines[len(lines)-1])
	}
	return time.Unix(s, ns), true
}

// buildForkLoop builds forkLoopC, static, at bin, owned by u.
func buildForkLoop(t *testing.T, u user, bin string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "loop.c")
	if err := os.WriteFile(src, []byte(forkLoopC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	if u.uid >= 0 {
		if err := os.Chown(bin, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitReady waits, with builtins only (no fork by the zygote), until
// the file ready is there: the attack's python has its lease.
const awaitReady = `n=0; while [ ! -e ready ] && [ $n -lt 2000000 ]; do n=$((n+1)); done`

// stopAtForkPy holds a write lease on ./loop: the zygote's fork of it,
// its process group made, waits in its exec for the lease to be let go.
// Then it stops the zygote (its parent; they share the Landlock domain),
// lets the exec go on and kills the zygote, which so never says the loop
// started (the third review's attack).
const stopAtForkPy = `import fcntl, os, signal, sys, time
fd = os.open("loop", os.O_RDONLY)
broke = []
signal.signal(signal.SIGIO, lambda *a: broke.append(1))
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
open("ready", "w").close()
end = time.time() + 5
while not broke and time.time() < end:
    time.sleep(0.001)
if not broke:
    sys.exit("no lease break")
zygote = os.getppid()
os.kill(zygote, signal.SIGSTOP)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
time.sleep(0.3)
os.kill(zygote, signal.SIGKILL)
`

// TestLadderSessionZygoteStoppedAtFork: a command stops the zygote while
// it forks another command, after that one's process group is made and
// before the zygote has said it started, then kills it. wsh heard of the
// group before it was made (MsgGroup), so it kills it when the zygote is
// gone, and says the command killed (137), not refused, once every
// process of it is gone: no process of the fork loop it runs is left to
// run after that (the script's date, a command that runs after wsh said
// so). Without that message the group was no one's to kill (status 126,
// and the loop ran on after wsh had exited). How soon the loop dies is
// the kernel's: a zygote killed while it was stopped has the loop's
// orphans to give away, and its exit has taken a second under load.
func TestLadderSessionZygoteStoppedAtFork(t *testing.T) {
	leaseAttack(t, 420, stopAtForkPy, func(token string) string {
		return "./loop marks " + token + "\necho loop=$?\ndate +%s.%N > said\nwait"
	}, "loop=137\n", true)
}

// stopThenCloseScript holds a write lease on ./loop and stops the zygote,
// so that the script's next command (./loop, a job) waits in the channel
// while the script ends and wsh closes the session: Close's SIGCONT lets
// the zygote fork it after wsh stopped reading. When that fork's exec
// breaks the lease, the zygote is stopped again and killed (the fourth
// review's attack). Only builtins run between the jobs.
const stopThenClosePy = `import fcntl, os, signal, sys, time
zygote = os.getppid()
fd = os.open("loop", os.O_RDONLY)
broke = []
signal.signal(signal.SIGIO, lambda *a: broke.append(1))
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
os.kill(zygote, signal.SIGSTOP)
open("ready", "w").close()
end = time.time() + 10
while not broke and time.time() < end:
    time.sleep(0.001)
if not broke:
    sys.exit(0)
os.kill(zygote, signal.SIGSTOP)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
time.sleep(0.3)
os.kill(zygote, signal.SIGKILL)
`

// TestLadderSessionRunAfterClose: a command queued in the channel when
// wsh closes the session is forked by the zygote after wsh has stopped
// reading; the zygote cannot tell wsh of its group, so it refuses it and
// the fork fails: the fork loop never runs. Without that refusal the
// group was made, the zygote killed before it could end it, and the loop
// ran (for a second or more, until wsh's sweep of the session found it;
// before the sweep, on after wsh had exited with status 0).
func TestLadderSessionRunAfterClose(t *testing.T) {
	leaseAttack(t, 421, stopThenClosePy, func(token string) string {
		return "./loop marks " + token + " &\nn=0; while [ $n -lt 20000 ]; do n=$((n+1)); done\necho script-end"
	}, "script-end\n", false)
}

// leaseAttack runs, on each lower rung as each user, in a session, the
// attack python stop (which makes the file ready once it holds its lease
// on ./loop, a forkLoopC) in the background, then the rest of the script,
// which rest makes from the test's token. It wants stdout and status 0.
// With ran, the loop must have run (the attack took place) and no process
// of it after wsh said the command ended (the time the script wrote to
// said); without, the loop must never have run.
func leaseAttack(t *testing.T, base int, stop string, rest func(token string) string, stdout string, ran bool) {
	for _, rung := range lowerRungs {
		for _, u := range users {
			t.Run(rung.name+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				token := uniqueNumber(base)
				t.Cleanup(func() { noLeftovers(t, token) })
				buildForkLoop(t, u, filepath.Join(dir, "loop"))
				writeOwned(t, u, filepath.Join(dir, "stop.py"), stop)
				script := "python3 stop.py &\n" + awaitReady + "\n" + rest(token)
				r := runHostile(t, u, dir, []string{"WSH_JAIL=session"}, rung.mode, script)
				if r.status != 0 || r.stdout != stdout {
					t.Errorf("status %d, stdout %q, want %q\nstderr:\n%s", r.status, r.stdout, stdout, r.stderr)
				}
				time.Sleep(300 * time.Millisecond) // a loop left would write every 20 ms
				last, wrote := lastRan(t, filepath.Join(dir, "marks"))
				if !ran {
					if wrote {
						t.Errorf("the fork loop ran, until %v", last)
					}
					return
				}
				b, err := os.ReadFile(filepath.Join(dir, "said"))
				if err != nil {
					t.Fatalf("the script did not say when the command ended: %v\nstderr:\n%s", err, r.stderr)
				}
				sec, nsec, _ := strings.Cut(strings.TrimSpace(string(b)), ".")
				s, _ := strconv.ParseInt(sec, 10, 64)
				ns, _ := strconv.ParseInt(nsec, 10, 64)
				switch said := time.Unix(s, ns); {
				case !wrote:
					t.Error("the fork loop never ran: the attack did not take place")
				case last.After(said):
					t.Errorf("the fork loop ran %v after its command was said to have ended", last.Sub(said))
				}
			})
		}
	}
}
