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
