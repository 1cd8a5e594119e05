//go:build linux && cgo

package e2e

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommandCannotForceDegrading: a jailed command cannot make the next
// jail attempt fail with EACCES and so switch the jail off for the rest of
// the session. Each script makes a later attempt fail, then reads Seccomp:
// there must be no warning, and no command may run unsandboxed.
func TestCommandCannotForceDegrading(t *testing.T) {
	cases := []struct {
		name, script string
		env          []string
		ownBinary    bool
	}{
		{"working directory made inaccessible", "chmod 000 .; /bin/true; cd /tmp; grep Seccomp: /proc/self/status", nil, false},
		{"nested writable path made inaccessible", "chmod 000 a; grep Seccomp: /proc/self/status", []string{"WSH_WRITABLE=%W/a/b"}, false},
		{"wsh binary made unexecutable", "chmod 000 ./wsh; grep Seccomp: /proc/self/status", nil, true},
		// The first command's directory refused in the child: not a
		// refused clone.
		{"working directory under /proc/PID/root", "cd /proc/$$/root/var/tmp; /bin/true; grep Seccomp: /proc/self/status", nil, false},
		// The binary changed while the first jailed command still runs.
		{"wsh binary changed by a running command", `sh -c 'chmod 000 ./wsh; sleep 1' &
while [ -x ./wsh ]; do :; done; grep Seccomp: /proc/self/status; wait`, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := unprivileged
			dir := workDir(t, u)
			bin := wshBin
			if c.ownBinary {
				bin = filepath.Join(dir, "wsh")
				copyFile(t, wshBin, bin)
				mustChown(t, bin, u.uid)
			}
			os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
			mustChown(t, filepath.Join(dir, "a"), u.uid)
			mustChown(t, filepath.Join(dir, "a", "b"), u.uid)
			var env []string
			for _, e := range c.env {
				env = append(env, strings.ReplaceAll(e, "%W", dir))
			}
			cmd := wshCmd(t.Context(), u, dir, env, "-c", c.script)
			cmd.Path, cmd.Args[0] = bin, bin
			out, _ := cmd.CombinedOutput()
			os.Chmod(dir, 0o755)
			os.Chmod(filepath.Join(dir, "a"), 0o755)
			if strings.Contains(string(out), "warning") || strings.Contains(string(out), "Seccomp:\t0") {
				t.Errorf("a command forced wsh to degrade:\n%s", out)
			}
			// Loud: the jail's own error, or the protected paths that
			// cannot be checked in a directory the command made
			// unsearchable (it could chmod it back, so no command runs).
			loud := strings.Contains(string(out), "wsh: jail: ") || strings.Contains(string(out), "cannot check the protected paths in ")
			if !strings.Contains(string(out), "Seccomp:\t2") && !loud {
				t.Errorf("neither jailed nor a loud failure:\n%s", out)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}

func mustChown(t *testing.T, p string, uid int) {
	t.Helper()
	if err := os.Chown(p, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestOtherSessionCannotForceDegrading: another session (here, the test)
// makes this session's wsh binary unexecutable before this session runs
// its first command. The jail init runs from a sealed copy of the binary,
// and the jail was made when the Runner was (wsh decides before the script
// runs): the command runs jailed, or fails loudly; never unsandboxed.
func TestOtherSessionCannotForceDegrading(t *testing.T) {
	u := unprivileged
	dir := workDir(t, u)
	bin := filepath.Join(dir, "wsh")
	copyFile(t, wshBin, bin)
	mustChown(t, bin, u.uid)
	cmd := wshCmd(t.Context(), u, dir, nil, "-c", "while ! test -e flag; do :; done; grep Seccomp: /proc/self/status")
	cmd.Path, cmd.Args[0] = bin, bin
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // wsh has started and made its Runner
	mustDo(t, os.Chmod(bin, 0))
	mustDo(t, os.WriteFile(filepath.Join(dir, "flag"), nil, 0o644))
	cmd.Wait()
	if strings.Contains(out.String(), "warning") || strings.Contains(out.String(), "Seccomp:\t0") {
		t.Errorf("another session forced wsh to degrade:\n%s", out.String())
	}
	// The init runs from a sealed copy of the binary, so the command still
	// runs jailed; were it not, the refusal would fail loudly.
	if !strings.Contains(out.String(), "Seccomp:\t2") && !strings.Contains(out.String(), "worked earlier") {
		t.Errorf("want the command jailed, or a loud failure:\n%s", out.String())
	}
}
