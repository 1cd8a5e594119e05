//go:build linux && cgo

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runWrapdemo runs the wrapdemo helper (an interpreter of its own with
// package wrap plugged in, between two recording middlewares) with script,
// as u in dir; on a host made hostile in mode, unless mode is "".
func runWrapdemo(t *testing.T, u user, dir string, env []string, mode, script string) result {
	t.Helper()
	demo := helperBin(t, "wrapdemo", "./wrapdemo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, u, dir, env, script)
	cmd.Path, cmd.Args = demo, []string{demo, script}
	if mode != "" {
		h := hostileBin(t)
		cmd.Path, cmd.Args = h, append([]string{h, mode, "--"}, cmd.Args...)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("wrapdemo did not run: %v", err)
	}
	return result{stdout: out.String(), stderr: errb.String(), status: cmd.ProcessState.ExitCode()}
}

// demoLines are the lines of what the demo's middleware called what
// ("seen" before wrap's, "next" after it) said, in order.
func demoLines(stderr, what string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^wrapdemo: `+what+`: (.*)$`).FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestWrapMiddleware: package wrap in an interpreter of the caller's own.
// Every command passes the caller's middleware before wrap's; each runs
// confined as the kernel shows it (its own /proc/self/status, a network
// namespace with only lo, a write outside the writable paths refused), on
// the full rung and, where the host refuses namespaces, on the landlock
// rung; the caller's next handler runs a command only where nothing
// confines it (opted out, the bottom of the ladder), never under
// WSH_REQUIRE_SANDBOX, where the command gets 126.
func TestWrapMiddleware(t *testing.T) {
	t.Cleanup(func() {
		ps, _ := filepath.Glob("/var/tmp/wsh-wrap-probe.*")
		for _, p := range ps {
			os.Remove(p)
			t.Errorf("a probe's write outside the writable paths was made: %s", p)
		}
	})
	const probe = `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; ls /sys/class/net; ` +
		`mkdir /var/tmp/wsh-wrap-probe.$$; echo "mkdir: $?"`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			t.Run("full", func(t *testing.T) {
				r := runWrapdemo(t, u, dir, nil, "", probe+`; echo x > /etc/wsh-wrap-probe; echo "redirection: $?"`)
				want := "NoNewPrivs:\t1\nSeccomp:\t2\nlo\nmkdir: 1\nredirection: 1\n"
				if r.status != 0 || r.stdout != want || !strings.Contains(r.stderr, "mkdir: cannot create directory") ||
					!strings.Contains(r.stderr, "Read-only file system") {
					t.Errorf("status %d, stdout %q (want %q)\n%s", r.status, r.stdout, want, r.stderr)
				}
				checkDemo(t, r, "grep ls mkdir", "", "confined full")
			})
			t.Run("landlock", func(t *testing.T) {
				r := runWrapdemo(t, u, dir, nil, cloneEPERM.arg, probe)
				if r.status != 0 || !strings.HasPrefix(r.stdout, "NoNewPrivs:\t1\nSeccomp:\t2\n") || strings.HasSuffix(r.stdout, "Seccomp:\t2\nlo\nmkdir: 1\n") ||
					!strings.HasSuffix(r.stdout, "mkdir: 1\n") || !strings.Contains(r.stderr, "Permission denied") ||
					strings.Count(r.stderr, "wsh: warning:") != 1 {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
				checkDemo(t, r, "grep ls mkdir", "", "degraded landlock")
			})
			t.Run("require", func(t *testing.T) {
				// The refused command ends the script with 126.
				r := runWrapdemo(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, cloneEPERM.arg, `env true; echo "env: $?"; id -u; echo "id: $?"`)
				if r.status != 126 || r.stdout != "" || strings.Count(r.stderr, "WSH_REQUIRE_SANDBOX is set, so env does not run; the script stops") != 1 {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
				checkDemo(t, r, "env", "", "refusing none")
			})
			t.Run("require, the shell's own access", func(t *testing.T) {
				// A test the jail cannot do is no answer: the script
				// ends at its next command.
				r := runWrapdemo(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, cloneEPERM.arg, `[ -e /etc/passwd ] && echo yes || echo no; echo "still running"`)
				if r.status == 0 || strings.Contains(r.stdout, "still running") || !strings.Contains(r.stderr, "WSH_REQUIRE_SANDBOX is set, so the shell does not open /etc/passwd") {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
			})
			t.Run("bottom of the ladder", func(t *testing.T) {
				// In a wsh jail on the seccomp rung, which refuses the
				// namespaces, Landlock's and the seccomp rung's own
				// setup: the demo steps down to none.
				demo := helperBin(t, "wrapdemo", "./wrapdemo")
				r := runHostile(t, u, dir, nil, "6", fmt.Sprintf(`%s 'env true; echo "env: $?"'`, demo))
				if r.status != 0 || r.stdout != "env: 0\n" {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
				checkDemo(t, r, "env", "env", "degraded none")
			})
			t.Run("config made by the last command", func(t *testing.T) {
				// No Run of wsh's ends: what a script's end says, the
				// Wrapper's Close says.
				r := runWrapdemo(t, u, dir, nil, "", `sh -c 'git init -q r && printf "[core]\n\tfsmonitor = evil\n" >> r/.git/config'`)
				if r.status != 0 || !strings.Contains(r.stderr, "r/.git/config, made during the run before wsh could make it read-only, sets core.fsmonitor") {
					t.Errorf("status %d\n%s", r.status, r.stderr)
				}
			})
			t.Run("lookups in the jail", func(t *testing.T) {
				// type and command -v of a path, and source's PATH
				// search, see what the jail sees: nothing in a hidden
				// directory.
				hid := filepath.Join(dir, "secret")
				mustRun(t, u, dir, nil, "mkdir -p "+hid+" && printf '#!/bin/sh\n' > "+hid+"/tool && chmod +x "+hid+"/tool && echo 'echo sourced' > "+hid+"/lib.sh")
				script := `command -v ` + hid + `/tool; echo "command: $?"; type ` + hid + `/tool >/dev/null 2>&1; echo "type: $?"; PATH=` + hid + ` . lib.sh 2>/dev/null; echo "source: $?"`
				r := runWrapdemo(t, u, dir, []string{"WSH_HIDE=" + hid}, "", script)
				if r.status != 0 || r.stdout != "command: 1\ntype: 1\nsource: 1\n" {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
			})
			for _, misuse := range []struct{ env, what string }{{"WRAPDEMO_ENV_AFTER=1", "environment"}, {"WRAPDEMO_CALL_AFTER=1", "call handler"}} {
				t.Run(misuse.what+" after wrap's", func(t *testing.T) {
					r := runWrapdemo(t, u, dir, []string{misuse.env}, "", `env true; echo "ran: $?"`)
					if r.status == 0 || strings.Contains(r.stdout, "ran") || !strings.Contains(r.stderr, "wsh: the interpreter's "+misuse.what+" was set after wrap's RunnerOptions") {
						t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
					}
				})
			}
			t.Run("opted out", func(t *testing.T) {
				r := runWrapdemo(t, u, dir, []string{"WSH_NO_SANDBOX=1"}, "", `env true; echo "env: $?"`)
				if r.status != 0 || r.stdout != "env: 0\n" || strings.Contains(r.stderr, "warning") {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
				checkDemo(t, r, "env", "env", "opted out none")
			})
		})
	}
}

// checkDemo: the demo's middleware before wrap's saw the commands seen,
// the one after it the commands next, and wrap's Status said status.
func checkDemo(t *testing.T, r result, seen, next, status string) {
	t.Helper()
	if got := strings.Join(demoLines(r.stderr, "seen"), " "); got != seen {
		t.Errorf("the middleware before wrap's saw %q, want %q\n%s", got, seen, r.stderr)
	}
	if got := strings.Join(demoLines(r.stderr, "next"), " "); got != next {
		t.Errorf("the next handler after wrap's ran %q, want %q\n%s", got, next, r.stderr)
	}
	if got := strings.Join(demoLines(r.stderr, "status"), " "); got != status {
		t.Errorf("wrap's Status: %q, want %q\n%s", got, status, r.stderr)
	}
}
