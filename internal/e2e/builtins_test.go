package e2e

import (
	"context"
	"os/exec"
	"strings"
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
				dir := workDir(t, u)
				var r result
				if p.mode != "" {
					r = runHostile(t, u, dir, p.env, p.mode, script)
				} else {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					cmd := wshCmd(ctx, u, dir, p.env, "-c", script)
					out, err := cmd.Output()
					r.stdout = string(out)
					if ee, ok := err.(*exec.ExitError); ok {
						r.status, r.stderr = ee.ExitCode(), string(ee.Stderr)
					}
				}
				if r.status != 0 || r.stdout != want {
					t.Errorf("status %d, stdout %q, want 0 and %q\n%s", r.status, r.stdout, want, strings.TrimSpace(r.stderr))
				}
			})
		}
	}
}
