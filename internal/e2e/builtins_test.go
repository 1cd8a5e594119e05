//go:build linux && cgo

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUmask: the umask builtin gives every later command, in the jail, on
// the landlock rung and unsandboxed, the mask it set, read back from the
// kernel by the command (sh's umask reads its own) and from the modes of
// the files a command and a redirection made; a subshell's stays in it.
// Before it, umask was "unsupported builtin" and commands kept wsh's.
func TestUmask(t *testing.T) {
	script := "umask 027; sh -c umask; : > f; sh -c ': > g'; stat -c %a f g; (umask 077; sh -c umask); sh -c umask"
	want := "0027\n640\n640\n0077\n0027\n"
	for _, p := range interruptPlaces {
		for _, u := range users {
			t.Run(p.name+"/"+u.name, func(t *testing.T) {
				r := runIn(t, p.mode, u, workDir(t, u), p.env, script)
				if r.status != 0 || r.stdout != want {
					t.Errorf("status %d, stdout %q, want 0 and %q\n%s", r.status, r.stdout, want, strings.TrimSpace(r.stderr))
				}
			})
		}
	}
}

// TestKillJob: kill $! and kill %N end a background job's command, in
// the jail, on the landlock rung and unsandboxed, read back from the
// host's process list (the sleep is gone) and the job's status (143).
// Before it, kill was "unsupported builtin" and the script waited the
// sleep's 30 s.
func TestKillJob(t *testing.T) {
	for _, p := range interruptPlaces {
		for _, u := range users {
			t.Run(p.name+"/"+u.name, func(t *testing.T) {
				token := uniqueNumber(30)
				script := "sleep " + token + " & kill $!; wait $!; echo st=$?; " +
					"sleep " + token + " & sleep 0.3; kill -s HUP %1; wait %1; echo st=$?"
				start := time.Now()
				r := runIn(t, p.mode, u, workDir(t, u), p.env, script)
				if r.status != 0 || r.stdout != "st=143\nst=129\n" {
					t.Errorf("status %d, stdout %q; want 0, st=143 and st=129\n%s", r.status, r.stdout, r.stderr)
				}
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("%v: the job's sleep was not ended", d)
				}
				if left := hostProcs(token); len(left) > 0 {
					t.Errorf("left running: %v", left)
				}
			})
		}
	}
}

// TestKillPidStaysInTheJail: kill with a process id is the jail's kill
// command, never wsh's own on the host: a process of the same user on the
// host is out of its reach (no such process in the jail's PID namespace;
// on the landlock rung, Landlock's signal scope), and lives on. As root,
// outside the jail, the same kill would end it.
func TestKillPidStaysInTheJail(t *testing.T) {
	for _, p := range interruptPlaces[:2] { // unsandboxed, it is the user's kill
		for _, u := range users {
			t.Run(p.name+"/"+u.name, func(t *testing.T) {
				pid := sleeperOf(t, u)
				r := runIn(t, p.mode, u, workDir(t, u), p.env, fmt.Sprintf("kill %d; echo st=$?; kill -9 %d; echo st=$?", pid, pid))
				if r.stdout != "st=1\nst=1\n" {
					t.Errorf("stdout %q, want two failed kills\n%s", r.stdout, r.stderr)
				}
				if err := syscall.Kill(pid, 0); err != nil {
					t.Errorf("the host's process %d: %v", pid, err)
				}
			})
		}
	}
}

// runIn runs `wsh -c script` as u, on the hostile harness's mode when
// one is given.
func runIn(t *testing.T, mode string, u user, dir string, env []string, script string) result {
	t.Helper()
	if mode != "" {
		return runHostile(t, u, dir, env, mode, script)
	}
	return runWsh(t, u, dir, env, script)
}
