//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fiveAppends appends one line to the file f five times, one command each,
// and then exits 3 through a sixth command.
const fiveAppends = `sh -c 'echo line >> f'
sh -c 'echo line >> f'
sh -c 'echo line >> f'
sh -c 'echo line >> f'
sh -c 'echo line >> f'
sh -c 'exit 3'
`

const warningPrefix = "wsh: warning: "

// appended returns the lines of dir/f; none when it does not exist.
func appended(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "f"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestHostileDegrades runs five commands on a host that refuses the jail
// with EPERM or EACCES, in mode 1 and in mode 2, as root and unprivileged:
// one warning that names the mode and the step, each command's effect
// exactly once (the refused attempt never ran the target), and the last
// command's own status.
func TestHostileDegrades(t *testing.T) {
	for _, u := range users {
		for _, m := range denialModes {
			t.Run(u.name+"/"+m.name(), func(t *testing.T) {
				dir := workDir(t, u)
				r := runHostile(t, u, dir, nil, m.arg, fiveAppends)
				if r.status != 3 {
					t.Errorf("status %d, want 3 (the last command's)", r.status)
				}
				if n := strings.Count(r.stderr, warningPrefix); n != 1 {
					t.Errorf("%d warnings over five commands, want 1:\n%s", n, r.stderr)
				}
				want := fmt.Sprintf("%s%s (mode %d: ", warningPrefix, m.message(), m.denial)
				if !strings.HasPrefix(r.stderr, want) {
					t.Errorf("stderr does not start with %q:\n%s", want, r.stderr)
				}
				if lines := appended(t, dir); strings.Join(lines, ",") != "line,line,line,line,line" {
					t.Errorf("f has %d lines, want exactly 5 (each command once): %q", len(lines), lines)
				}
			})
		}
	}
}

// TestHostileModeTwoIsModeTwo shows that the mount modes exercise mode 2:
// the refusal that wsh reports comes from a setup step of the jail init
// (mount-private), which runs only as PID 1 of the new namespaces, so the
// clone succeeded (TestHostileProbe reads that back from the kernel). The
// EACCES of mode 4 is the harness's fingerprint: the kernel's own answer
// to a mount without privilege is EPERM, so a "permission denied" on
// mount-private is the filter's mount rule firing in the started child.
// The clone modes, in contrast, must name the step clone and mode 1.
func TestHostileModeTwoIsModeTwo(t *testing.T) {
	for _, u := range users {
		for _, m := range denialModes {
			t.Run(u.name+"/"+m.name(), func(t *testing.T) {
				dir := workDir(t, u)
				r := runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, m.arg, "/bin/true")
				want := fmt.Sprintf("wsh: %s (mode %d: ", m.message(), m.denial)
				if !strings.HasPrefix(r.stderr, want) {
					t.Errorf("stderr does not start with %q:\n%s", want, r.stderr)
				}
				if r.status != 126 {
					t.Errorf("status %d, want 126", r.status)
				}
			})
		}
	}
}

// TestHostileUsernsLimitFailsLoudly runs five commands where
// user.max_user_namespaces is 0: ENOSPC is not a denial, so no jail can
// be made: wsh says so once, when it makes its Runner (shell.New returns
// a *shell.JailError), and exits 126; no command runs, nothing degrades,
// and the message names the cause.
func TestHostileUsernsLimitFailsLoudly(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			r := runHostile(t, u, dir, nil, usernsLimit.arg, fiveAppends)
			if r.status != 126 {
				t.Errorf("status %d, want 126", r.status)
			}
			if lines := appended(t, dir); lines != nil {
				t.Errorf("a command ran: f has %q", lines)
			}
			if strings.Contains(r.stderr, warningPrefix) {
				t.Errorf("wsh degraded on ENOSPC:\n%s", r.stderr)
			}
			want := "wsh: " + usernsLimit.message() + ": "
			if n := strings.Count(r.stderr, want); n != 1 {
				t.Errorf("%d messages %q, want one:\n%s", n, want, r.stderr)
			}
			if !strings.Contains(r.stderr, "user.max_user_namespaces") {
				t.Errorf("the message does not name user.max_user_namespaces:\n%s", r.stderr)
			}
		})
	}
}

// TestHostileRequireSandbox fails closed in every hostile mode: status 126,
// the command did not run, no warning.
func TestHostileRequireSandbox(t *testing.T) {
	for _, u := range users {
		for _, m := range append(denialModes, usernsLimit) {
			t.Run(u.name+"/"+m.name(), func(t *testing.T) {
				dir := workDir(t, u)
				r := runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, m.arg, "sh -c 'echo line >> f'")
				if r.status != 126 {
					t.Errorf("status %d, want 126", r.status)
				}
				if lines := appended(t, dir); lines != nil {
					t.Errorf("the command ran: f has %q", lines)
				}
				if !strings.HasPrefix(r.stderr, "wsh: "+m.message()) {
					t.Errorf("stderr does not start with %q:\n%s", "wsh: "+m.message(), r.stderr)
				}
				if m.denial != 0 && !strings.Contains(r.stderr, "WSH_REQUIRE_SANDBOX is set") {
					t.Errorf("the message does not name WSH_REQUIRE_SANDBOX:\n%s", r.stderr)
				}
				if strings.Contains(r.stderr, warningPrefix) {
					t.Errorf("a warning under WSH_REQUIRE_SANDBOX:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestOptOutHasNoJail reads the opted-out command's own status back on this
// healthy host: the caller's capabilities (root's are not empty), no
// seccomp filter, no no_new_privs, the host's user namespace, and no
// warning.
func TestOptOutHasNoJail(t *testing.T) {
	hostNS, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), []string{"WSH_NO_SANDBOX=1"}, "cat /proc/self/status; readlink /proc/self/ns/user")
			if r.status != 0 || r.stderr != "" {
				t.Fatalf("status %d, stderr:\n%s", r.status, r.stderr)
			}
			if u == root && statusField(t, r.stdout, "CapEff") == "0000000000000000" {
				t.Errorf("root's CapEff is empty: the command ran with a dropped jail's capabilities")
			}
			for f, want := range map[string]string{"Seccomp": "0", "NoNewPrivs": "0"} {
				if got := statusField(t, r.stdout, f); got != want {
					t.Errorf("%s = %s, want %s", f, got, want)
				}
			}
			if !strings.HasSuffix(r.stdout, "\n"+hostNS+"\n") {
				t.Errorf("not in the host's user namespace %s:\n%s", hostNS, r.stdout)
			}
		})
	}
}

// TestNoForgedReport writes a well-formed report to fd 3 from the target, on
// this healthy host: fd 3 is not open there (the sentinel is close-on-exec
// before the target runs), so the write fails, and wsh neither warns nor
// degrades: the next command is still in the jail.
func TestNoForgedReport(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), nil, `sh -c 'echo x >&3'; echo "status $?"`)
			if !strings.Contains(r.stderr, "Bad file descriptor") || r.stdout != "status 2\n" {
				t.Errorf("fd 3 is usable in the target: stdout %q, stderr:\n%s", r.stdout, r.stderr)
			}
			forge := `sh -c 'printf "w\245\002\000\001\000\000\000" >&3'
sh -c 'printf "w\245\002\000\001\000\000\000" >&3'
cat /proc/self/status`
			r = runWsh(t, u, workDir(t, u), nil, forge)
			if r.status != 0 {
				t.Fatalf("status %d\n%s", r.status, r.stderr)
			}
			if strings.Contains(r.stderr, "wsh:") || strings.Count(r.stderr, "Bad file descriptor") != 2 {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			if got := statusField(t, r.stdout, "Seccomp"); got != "2" {
				t.Errorf("after the forgery Seccomp = %s, want 2 (still jailed)", got)
			}
		})
	}
}

// TestEveryExitStatusIsTheTargets runs targets that exit with every status
// from 0 to 255, the jail's reserved 125 included: each is the command's
// own status, none is taken for a refusal, and the jail stays in force.
func TestEveryExitStatusIsTheTargets(t *testing.T) {
	const script = `for i in $(seq 0 255); do
	sh -c "exit $i"
	s=$?
	[ "$s" -eq "$i" ] || echo "exit $i gave $s"
done
cat /proc/self/status`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), nil, script)
			if r.status != 0 || r.stderr != "" {
				t.Fatalf("status %d, stderr:\n%s", r.status, r.stderr)
			}
			if strings.Contains(r.stdout, "exit ") {
				t.Errorf("a status was not the target's:\n%s", r.stdout)
			}
			if got := statusField(t, r.stdout, "Seccomp"); got != "2" {
				t.Errorf("after 256 statuses Seccomp = %s, want 2 (still jailed)", got)
			}
		})
	}
}

// TestNoForgedReportThroughProc: the target must not reach the sentinel
// through the jail init's /proc/1/fd either. The init holds fd 3 until the
// target has been exec'd, so a target that opens /proc/1/fd/3 at once can
// win that race and write a report; the init's descriptors must be out of
// the target's reach. The deterministic check, then fifty racing targets.
func TestNoForgedReportThroughProc(t *testing.T) {
	const script = `sh -c ': </proc/1/fd/0' && echo opened
readlink /proc/1/fd/0 && echo followed
for i in $(seq 50); do
	sh -c 'printf "w\245\002\000\001\000\000\000" 2>/dev/null >/proc/1/fd/3 && echo forged'
done
cat /proc/self/status`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), nil, script)
			if strings.Contains(r.stderr, warningPrefix) || strings.Contains(r.stdout, "forged") {
				t.Errorf("a target forged a report through /proc/1/fd/3:\n%s%s", r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "opened") || strings.Contains(r.stdout, "followed") {
				t.Errorf("the target reaches the jail init's descriptors:\n%s", r.stdout)
			}
			if got := statusField(t, r.stdout, "Seccomp"); got != "2" {
				t.Errorf("Seccomp = %s at the end, want 2 (still jailed)", got)
			}
		})
	}
}
