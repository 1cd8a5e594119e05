//go:build linux && cgo

package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestReadOnlyStdinCannotBeReopenedForWriting: a file outside the writable
// paths given as a command's standard input is read-only in the jail too.
// Through /proc/self/fd/0 the command would otherwise open it again for
// writing on the host's read-write mount. The offset must survive.
func TestReadOnlyStdinCannotBeReopenedForWriting(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("/var/tmp", "wsh-stdin-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			os.Chmod(dir, 0o755)
			victim := dir + "/victim"
			mustDo(t, os.WriteFile(victim, []byte("l1\nl2\n"), 0o666))
			os.Chmod(victim, 0o666) // writable by every uid: only the jail can refuse
			r := runWsh(t, u, workDir(t, u), []string{"WSH_REQUIRE_SANDBOX=1"},
				`sh -c 'echo PWNED >> /proc/self/fd/0; echo PWNED > /dev/stdin' < `+victim+`
{ read -r a; echo "read $a"; sh -c 'cat'; } < `+victim)
			if b, _ := os.ReadFile(victim); string(b) != "l1\nl2\n" {
				t.Errorf("the read-only stdin was written: %q\n%s", b, r.stderr)
			}
			if strings.Count(r.stderr, "Read-only file system") != 2 {
				t.Errorf("want two EROFS refusals, stderr:\n%s", r.stderr)
			}
			if r.stdout != "read l1\nl2\n" {
				t.Errorf("stdout %q: the offset was not kept", r.stdout)
			}
		})
	}
}

// TestStdinDirectoryShowsTheJailsView: a directory given as stdin is the
// jail's view of it, not the host's: /proc/self/fd/0/... can neither write
// outside nor read a hidden path. A stream the jail cannot show (a /proc
// file) comes through a pipe; /dev/null and pipes work as ever.
func TestStdinDirectoryShowsTheJailsView(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			a := newAttackTree(t, u)
			r := runWshStdin(t, u, a.work, a.env, "/",
				`sh -c 'cat /proc/self/fd/0`+a.secret+`/file; echo PWNED > /proc/self/fd/0`+a.outside+`/f'`)
			a.check(t, r)
			if !strings.Contains(r.stderr, "Read-only file system") || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("want EROFS and EACCES through the directory, stderr:\n%s", r.stderr)
			}
			// A file of the host's /proc, which the jail replaces with
			// its own, reaches the command through a pipe (issue 17; it
			// was exit 126 before).
			r = runWshStdin(t, u, a.work, a.env, "/proc/sys/kernel/ostype", "cat")
			if r.status != 0 || r.stdout != "Linux\n" {
				t.Errorf("a /proc file as stdin: status %d, stdout %q, stderr %q; want 0 and Linux", r.status, r.stdout, r.stderr)
			}
			r = runWshStdin(t, u, a.work, a.env, "/dev/null", "cat; echo ok; ls /nonexistent 2>/dev/null; echo $?")
			if r.status != 0 || r.stdout != "ok\n2\n" || r.stderr != "" {
				t.Errorf("/dev/null: status %d, stdout %q, stderr %q", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// runWshStdin is runWsh with stdin opened read-only from path.
func runWshStdin(t *testing.T, u user, dir string, env []string, path, script string) result {
	t.Helper()
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := wshCmd(t.Context(), u, dir, env, "-c", script)
	cmd.Stdin = in
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatal("wsh did not run")
	}
	return result{stdout: out.String(), stderr: errb.String(), status: cmd.ProcessState.ExitCode()}
}
