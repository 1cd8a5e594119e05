//go:build linux && cgo

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interruptPlaces are where a command runs when wsh gets a SIGINT: in the
// full jail (a session, or a jail per command in make test's second run),
// on the landlock rung (the hostile harness's mode 1), and unsandboxed.
var interruptPlaces = []struct {
	name string
	env  []string
	mode string // the hostile harness's, or "" for none
}{
	{"jail", jailEnv, ""},
	{"landlock", []string{"WSH_REQUIRE_SANDBOX=landlock"}, "1"},
	{"opted-out", []string{"WSH_NO_SANDBOX=1"}, ""},
}

// pyCatch is a Python program that handles Ctrl-C (KeyboardInterrupt)
// and exits 0.
// It sleeps in short steps: a SIGINT that comes between the print and
// the start of one long sleep(2) would wait for its end (Python checks
// for signals between bytecodes, not before a system call).
const pyCatch = `python3 -c 'import time
try:
    print("ready", flush=True)
    for _ in range(300):
        time.sleep(0.1)
except KeyboardInterrupt:
    print("caught", flush=True)'`

// TestInterrupt sends wsh the SIGINT a terminal's Ctrl-C sends, while a
// foreground command runs, and reads what came of it back from the
// commands' own output and wsh's wait status. As in bash: the command's
// process group gets SIGINT (a shell's trap runs at once, because its
// sleep got it too); a script whose command handled it goes on; one whose
// command died of it ends, and wsh dies of SIGINT; a background job does
// not get it; with no command running the script stops. Before the
// change, every case ended the script, and wsh sent SIGTERM.
func TestInterrupt(t *testing.T) {
	cases := []struct {
		name, script string
		want         []string // lines of output, in order
		not          string   // output that must not be there
		died         bool     // wsh dies of SIGINT (else exits 0)
	}{
		// SLEEP is a sleep of about 30 s, with an argument of its own
		// that the test waits to see running before it sends the SIGINT.
		{"dies", "echo ready; SLEEP; echo NOT-REACHED", []string{"ready"}, "NOT-REACHED", true},
		{"trap", `bash -c 'trap "echo trapped" INT; echo ready; SLEEP; echo after-sleep'; echo goes-on`,
			[]string{"ready", "trapped", "after-sleep", "goes-on"}, "", false},
		{"python", pyCatch + "; echo goes-on", []string{"ready", "caught", "goes-on"}, "", false},
		{"background", `sh -c 'sleep 3; echo bg-done' & ` + pyCatch + `; wait; echo end`,
			[]string{"ready", "caught", "bg-done", "end"}, "", false},
		{"builtins", "echo ready; while :; do :; done; echo NOT-REACHED", []string{"ready"}, "NOT-REACHED", true},
		// A subshell's or a command substitution's command that died
		// of it ends the script too (review).
		{"subshell", "echo ready; ( SLEEP ); echo NOT-REACHED", []string{"ready"}, "NOT-REACHED", true},
		{"substitution", "echo ready; x=$(SLEEP); echo NOT-REACHED", []string{"ready"}, "NOT-REACHED", true},
		// A job that eval starts is a job too (review).
		{"eval-background", `eval "sh -c 'sleep 3; echo bg-done' &"; ` + pyCatch + `; wait; echo end`,
			[]string{"ready", "caught", "bg-done", "end"}, "", false},
	}
	for _, p := range interruptPlaces {
		for _, u := range users {
			for _, c := range cases {
				t.Run(p.name+"/"+u.name+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					token := uniqueNumber(30)
					script := strings.ReplaceAll(c.script, "SLEEP", "sleep "+token)
					// wsh's own variable in its environment changes
					// nothing (review: it made commands background ones).
					env := append([]string{"__wsh_background=1"}, p.env...)
					s := startCmd(t, cmdIn(t, p.mode, u, workDir(t, u), env, script))
					s.waitLine(t, "ready")
					if script != c.script && !waitUntil(10*time.Second, func() bool { return sleepRuns(token) }) {
						t.Fatal("the sleep did not start in 10 s")
					}
					start := time.Now()
					if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
						t.Fatal(err)
					}
					_, out := s.wait(t, 20*time.Second)
					ws := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
					switch {
					case c.died && !(ws.Signaled() && ws.Signal() == syscall.SIGINT):
						t.Errorf("wsh did not die of SIGINT: %v", s.cmd.ProcessState)
					case !c.died && ws.ExitStatus() != 0:
						t.Errorf("wsh: %v, want exit status 0", s.cmd.ProcessState)
					}
					if d := time.Since(start); d > 15*time.Second {
						t.Errorf("%v after the SIGINT: the command did not get it", d)
					}
					if !inOrder(out, c.want) || (c.not != "" && strings.Contains(out, c.not)) {
						t.Errorf("output:\n%s\nwant the lines %q in order, and no %q", out, c.want, c.not)
					}
				})
			}
		}
	}
}

// inOrder says whether out has each of want as a line, in that order.
func inOrder(out string, want []string) bool {
	lines := strings.Split(out, "\n")
	i := 0
	for _, l := range lines {
		if i < len(want) && l == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestInterruptStatus: a command that dies of the interrupt in a script
// that goes on regardless in bash too (a subshell's, or wsh's own -c in a
// shell) ends it; a status of 130 from a command that was not
// interrupted is only a status.
func TestInterruptStatus(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv, "sh -c 'exit 130'; echo st=$?; sh -c 'kill -INT $$'; echo st=$?")
			if r.status != 0 || r.stdout != "st=130\nst=130\n" {
				t.Errorf("status %d, stdout %q; want 0 and two st=130 lines: no interrupt came from wsh\n%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestRequireSandboxStopsTheScript: under WSH_REQUIRE_SANDBOX, the first
// command refused ends the whole run with 126 (not only that command):
// nothing after it runs, builtins and redirections included, in the
// foreground or after a background job's refusal. Before the change the
// script went on, and could exit 0.
func TestRequireSandboxStopsTheScript(t *testing.T) {
	for _, u := range users {
		for _, m := range []hostileMode{cloneEPERM, mountEACCES} {
			for _, script := range []string{
				"echo before; /bin/true; echo after > g; echo after",
				"echo before; /bin/true & wait; echo after > g; echo after",
			} {
				t.Run(u.name+"/"+m.name()+"/"+script, func(t *testing.T) {
					dir := workDir(t, u)
					r := runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, m.arg, script)
					if r.status != 126 || r.stdout != "before\n" {
						t.Errorf("status %d, stdout %q; want 126 and only %q\n%s", r.status, r.stdout, "before\n", r.stderr)
					}
					if _, err := os.Stat(filepath.Join(dir, "g")); err == nil {
						t.Errorf("the redirection after the refused command ran")
					}
					if n := strings.Count(r.stderr, "WSH_REQUIRE_SANDBOX is set"); n != 1 {
						t.Errorf("%d refusals said, want 1:\n%s", n, r.stderr)
					}
				})
			}
		}
	}
}

// cmdIn is the command that runs `wsh -c script` as u, on the hostile
// harness's mode when one is given.
func cmdIn(t *testing.T, mode string, u user, dir string, env []string, script string) *exec.Cmd {
	if mode != "" {
		return hostileCmd(t, context.Background(), u, dir, env, mode, script)
	}
	return wshCmd(context.Background(), u, dir, env, "-c", script)
}
