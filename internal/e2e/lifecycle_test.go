//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJailExitStatus checks that wsh exits with the target's own status,
// and with 128+N when a signal N killed the target.
func TestJailExitStatus(t *testing.T) {
	cases := []struct {
		script string
		want   int
	}{
		{"true", 0},
		{"sh -c 'exit 42'", 42},
		{"sh -c 'kill -TERM $$'", 128 + int(syscall.SIGTERM)},
		{"sh -c 'kill -KILL $$'", 128 + int(syscall.SIGKILL)},
		{"sh -c 'kill -SEGV $$'", 128 + int(syscall.SIGSEGV)},
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			for _, c := range cases {
				if r := runWsh(t, u, dir, jailEnv, c.script); r.status != c.want {
					t.Errorf("wsh -c %q: status %d, want %d\nstderr:\n%s", c.script, r.status, c.want, r.stderr)
				}
			}
		})
	}
}

// orphanScript leaves a sleep of arg seconds behind, detached from the
// output so that it cannot hold wsh's pipes open.
func orphanScript(arg string) string {
	return "sh -c 'sleep " + arg + " >/dev/null 2>&1 </dev/null & echo $!'"
}

// TestJailKillsOrphans runs a target that leaves a process behind and
// checks, in the host's /proc, that nothing of it is left once wsh exits.
// The control: without the jail the same orphan survives, so the check can
// see one.
func TestJailKillsOrphans(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			arg := uniqueNumber(1234)
			out := mustJail(t, u, dir, nil, orphanScript(arg))
			if _, err := strconv.Atoi(strings.TrimSpace(out)); err != nil {
				t.Fatalf("the orphan's pid: %q", out)
			}
			noLeftovers(t, arg)

			ctl := uniqueNumber(1234)
			mustRun(t, u, dir, []string{"WSH_NO_SANDBOX=1"}, orphanScript(ctl))
			if len(hostProcs(ctl)) == 0 {
				t.Errorf("control: the orphan of an unsandboxed run is not in the host's /proc")
			}
			for _, p := range hostProcs(ctl) {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		})
	}
}

// startSleep starts `wsh -c 'sleep ARG'` as u and waits until the sleep
// runs in the jail. It returns the wsh and ARG.
func startSleep(t *testing.T, u user) (*started, string) {
	t.Helper()
	arg := uniqueNumber(300)
	s := startWsh(t, u, workDir(t, u), jailEnv, "sleep "+arg)
	t.Cleanup(func() { noLeftovers(t, arg) })
	isSleep := func() bool {
		for _, p := range hostProcs(arg) {
			if p.args[0] == "sleep" {
				return true
			}
		}
		return false
	}
	if !waitUntil(10*time.Second, isSleep) {
		s.wait(t, time.Second)
		t.Fatalf("the sleep did not start in 10s")
	}
	return s, arg
}

// TestJailStopsOnSignal sends SIGTERM or SIGINT to wsh while a jailed sleep
// runs: wsh exits within 10s with 128+N, and no process of the jail (its
// init or the sleep) is left on the host.
func TestJailStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		for _, u := range users {
			t.Run(sig.String()+"/"+u.name, func(t *testing.T) {
				s, arg := startSleep(t, u)
				if err := s.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				if status, out := s.wait(t, 10*time.Second); status != 128+int(sig) {
					t.Errorf("wsh after %v: status %d, want %d\noutput:\n%s", sig, status, 128+int(sig), out)
				}
				noLeftovers(t, arg)
			})
		}
	}
}

// TestJailDiesWithWsh kills wsh with SIGKILL, which it cannot handle: the
// jail's init and its sleep die with it (the parent-death signal).
func TestJailDiesWithWsh(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			s, arg := startSleep(t, u)
			if err := s.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			s.wait(t, 10*time.Second)
			if !waitUntil(10*time.Second, func() bool { return len(hostProcs(arg)) == 0 }) {
				t.Errorf("10s after wsh was killed, the jail still runs")
			}
			noLeftovers(t, arg)
		})
	}
}

// trapScript is a target that reports the signals it receives.
const trapScript = `sh -c 'trap "echo got INT; exit 3" INT; trap "echo got TERM; exit 4" TERM; echo ready; while :; do sleep 0.1; done' `

// TestJailForwardsSignals shows that the jail's init passes signals on to
// the target: SIGINT sent from the host to the init reaches the target's
// trap, and SIGTERM to wsh reaches it as the SIGTERM of the cancellation.
func TestJailForwardsSignals(t *testing.T) {
	for _, u := range users {
		t.Run("init/"+u.name, func(t *testing.T) {
			token := uniqueNumber(0)
			s := startWsh(t, u, workDir(t, u), jailEnv, trapScript+token)
			s.waitLine(t, "ready")
			init := jailInit(t, token)
			if err := syscall.Kill(init, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if status, out := s.wait(t, 10*time.Second); status != 3 || !strings.Contains(out, "got INT") {
				t.Errorf("SIGINT to the jail's init: status %d, output:\n%s\nwant 3 and got INT", status, out)
			}
			noLeftovers(t, token)
		})
		t.Run("wsh/"+u.name, func(t *testing.T) {
			token := uniqueNumber(0)
			s := startWsh(t, u, workDir(t, u), jailEnv, trapScript+token)
			s.waitLine(t, "ready")
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if status, out := s.wait(t, 10*time.Second); status != 143 || !strings.Contains(out, "got TERM") {
				t.Errorf("SIGTERM to wsh: status %d, output:\n%s\nwant 143 and got TERM", status, out)
			}
			noLeftovers(t, token)
		})
	}
}

// jailInit returns the host pid of the jail init whose target has token:
// the target's parent (the init's own argv is only wsh-jail-init).
func jailInit(t *testing.T, token string) int {
	t.Helper()
	for _, p := range hostProcs(token) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid, _ := strconv.Atoi(strings.TrimSpace(v))
				if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid)); strings.HasPrefix(string(c), "wsh-jail-init\x00") {
					return ppid
				}
			}
		}
	}
	t.Fatalf("no jail init above a target with %s in the host's /proc", token)
	return 0
}

// allButForwarded are the standard signals but SIGKILL, SIGSTOP and the
// four the init forwards to its target (1, 2, 3, 15), by number.
const allButForwarded = "4 5 6 7 8 10 11 12 13 14 16 17 18 20 21 22 23 24 25 26 27 28 29 30 31"

// TestTargetCannotCrashItsInit: a target that sends its PID 1 any signal
// it does not forward (among them those that end a Go program, a fault
// sent by kill, and the stop signals) does not crash or stop the init: the
// command goes on and exits as it would, with no Go stack dump.
func TestTargetCannotCrashItsInit(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv,
				`sh -c 'for s in `+allButForwarded+`; do kill -$s 1; done; sleep 0.2; echo alive'`)
			if r.status != 0 || strings.TrimSpace(r.stdout) != "alive" || r.stderr != "" {
				t.Errorf("status %d\nstdout:\n%s\nstderr:\n%.2000s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestTargetCannotQueueAFaultToItsInit: a fault signal whose si_code says
// the kernel sent it is one Go takes for a real fault and dies of, caught
// or not. A target cannot send one to its init: queued (sigqueue(3)) to
// PID 1 or to the tid of the init's last thread, or as the signal of a
// descriptor the init owns (F_SETOWN 1, F_SETSIG). The seccomp policy
// refuses them (group siginfo), and the init lives on.
func TestTargetCannotQueueAFaultToItsInit(t *testing.T) {
	probe := probeBin(t)
	script := probe + " sigqueue 11 1; " + probe + " sigqueue 7 $(ls /proc/1/task | sort -n | tail -1); " +
		probe + " setsig 11 1; sleep 0.2; echo alive"
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv, script)
			if r.status != 0 || r.stdout != "EPERM\nEPERM\nEPERM\nalive\n" || r.stderr != "" {
				t.Errorf("status %d\nstdout:\n%s\nstderr:\n%.2000s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestTracedTargetStillEnds: a process of the jail that ptraces the target
// is told of its exit first and may never wait for it; the jail still ends
// when the target exits, with the target's status, and the tracer with it.
func TestTracedTargetStillEnds(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			token := uniqueNumber(0)
			done := make(chan result, 1)
			go func() { done <- runWsh(t, u, workDir(t, u), jailEnv, probe+" hide-exit 7 "+token) }()
			select {
			case r := <-done:
				if r.status != 7 {
					t.Errorf("status %d, want the target's 7\nstderr:\n%s", r.status, r.stderr)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("wsh did not return within 20 s of the traced target's exit")
			}
			noLeftovers(t, token)
		})
	}
}
