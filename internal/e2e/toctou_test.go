//go:build linux && cgo

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritablePathCannotBeRedirected: while a run goes on, a parent of its
// working directory is renamed and a symlink to another directory left in
// its place: by another run's command, or a program on the host (a
// command of the run itself cannot: the ground is pinned in its jail,
// TestGroundDoesNotMove). The next jail must not bind that other
// directory writable (the init follows no symlink and checks the identity
// of each writable path), and an in-process write through the old path
// must be refused. In a session there is no next jail: the session's
// binds stay with the directory that moved, the symlink leads to a
// directory that is read-only in it, and the command's write fails there.
func TestWritablePathCannotBeRedirected(t *testing.T) {
	for _, mode := range []string{"session", "command"} {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) { testWritableRedirected(t, u, mode) })
		}
	}
}

func testWritableRedirected(t *testing.T, u user, mode string) {
	{
		{
			top := workDir(t, u)
			outside, err := os.MkdirTemp("/var/tmp", "wsh-outside-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(outside) })
			for _, d := range []string{filepath.Join(top, "r", "proj"), filepath.Join(outside, "proj")} {
				mustDo(t, os.MkdirAll(d, 0o755))
				if u.uid >= 0 {
					mustChown(t, d, u.uid)
					mustChown(t, filepath.Dir(d), u.uid)
				}
			}
			proj := filepath.Join(top, "r", "proj")
			up, goOn := gate(t, "up"), gate(t, "go")
			script := `sh -c 'echo up > "$UP"; read x < "$GO"'
sh -c 'echo PWNED > ` + proj + `/PWNED; grep Seccomp: /proc/self/status'
echo PWNED > ` + proj + `/PWNED2`
			// HOME elsewhere: the start directory is then a writable path of
			// its own (the home is never writable by default).
			b := startBg(t, u, proj, []string{"HOME=/nonexistent", "WSH_JAIL=" + mode, "UP=" + up, "GO=" + goOn}, script)
			reached(t, b, up)
			mustDo(t, os.Rename(filepath.Join(top, "r"), filepath.Join(top, "r.old")))
			mustDo(t, os.Symlink(outside, filepath.Join(top, "r")))
			release(t, b, goOn)
			r := b.wait(t)
			for _, f := range []string{"PWNED", "PWNED2"} {
				if _, err := os.Stat(filepath.Join(outside, "proj", f)); err == nil {
					t.Errorf("%s was written outside every writable path:\n%s%s", f, r.stdout, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "warning") || strings.Contains(r.stdout, "Seccomp:\t0") {
				t.Errorf("wsh degraded:\n%s%s", r.stdout, r.stderr)
			}
			switch {
			case mode == "command" && !strings.Contains(r.stderr, "wsh: jail: detach:"):
				t.Errorf("the jail did not fail loudly at the redirected path:\n%s", r.stderr)
			case mode == "session" && !strings.Contains(r.stderr, "proj/PWNED: Read-only file system"):
				t.Errorf("the session's command did not fail at the redirected path:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, "wsh: "+proj+"/PWNED2: Read-only file system") {
				t.Errorf("the shell's own write through the redirected path was not refused:\n%s", r.stderr)
			}
		}
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
