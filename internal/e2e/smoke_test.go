//go:build linux && cgo

package e2e

import "testing"

// TestJailIsInForce reads the jail's own status back from the kernel, as
// root and as an unprivileged uid.
func TestJailIsInForce(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			st := mustRun(t, u, workDir(t, u), nil, "cat /proc/self/status")
			for _, f := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"} {
				if got := statusField(t, st, f); got != "0000000000000000" {
					t.Errorf("%s = %s, want 0", f, got)
				}
			}
			if got := statusField(t, st, "NoNewPrivs"); got != "1" {
				t.Errorf("NoNewPrivs = %s, want 1", got)
			}
			if got := statusField(t, st, "Seccomp"); got != "2" {
				t.Errorf("Seccomp = %s, want 2", got)
			}
		})
	}
}
