//go:build linux && cgo

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileBin returns the path of the hostile-host harness (./hostile).
func hostileBin(t *testing.T) string {
	return helperBin(t, "hostile", "./hostile")
}

// A hostileMode is one way a host refuses the jail, as the harness makes it.
type hostileMode struct {
	arg string
	// what wsh must say: "jail: STEP: ERRNO-TEXT", then "(mode N" for a
	// denial.
	step, errText string
	denial        int // the denial mode; 0 when the refusal is not a denial
}

var (
	cloneEPERM  = hostileMode{"1", "clone", "operation not permitted", 1}
	cloneEACCES = hostileMode{"2", "clone", "permission denied", 1}
	mountEPERM  = hostileMode{"3", "mount-private", "operation not permitted", 2}
	mountEACCES = hostileMode{"4", "mount-private", "permission denied", 2}
	usernsLimit = hostileMode{"5", "clone", "no space left on device", 0}
	// denialModes are the refusals wsh degrades on.
	denialModes = []hostileMode{cloneEPERM, cloneEACCES, mountEPERM, mountEACCES}
)

func (m hostileMode) name() string { return "mode" + m.arg }

// message is the start of what wsh says about the refusal.
func (m hostileMode) message() string {
	return fmt.Sprintf("jail: %s: %s", m.step, m.errText)
}

// hostileCmd builds `hostile MODE -- wsh -c script`, run as u in dir.
func hostileCmd(t *testing.T, ctx context.Context, u user, dir string, env []string, mode, script string) *exec.Cmd {
	h := hostileBin(t)
	cmd := wshCmd(ctx, u, dir, env, "-c", script)
	cmd.Path = h
	cmd.Args = append([]string{h, mode, "--", wshBin}, cmd.Args[1:]...)
	return cmd
}

// runHostile is runWsh on a host made hostile in mode.
func runHostile(t *testing.T, u user, dir string, env []string, mode, script string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := hostileCmd(t, ctx, u, dir, env, mode, script)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("hostile %s: did not run: %v", mode, err)
	}
	r := result{stdout: out.String(), stderr: errb.String(), status: cmd.ProcessState.ExitCode()}
	if r.status == 111 && strings.Contains(r.stderr, "hostile:") {
		t.Fatalf("the harness failed in mode %s:\n%s", mode, r.stderr)
	}
	return r
}

// probeHostile runs `hostile MODE probe` as u: the harness does wsh's clone
// itself and prints what the kernel answered.
func probeHostile(t *testing.T, u user, mode string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := hostileBin(t)
	cmd := exec.CommandContext(ctx, h, mode, "probe")
	cmd.Dir = "/"
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostile %s probe as %s: %v\n%s", mode, u.name, err, out)
	}
	return string(out)
}

// TestHostileProbe reads the harness's refusals back from the kernel, with
// the clone flags, id maps and first mount that wsh's jail uses. Mode 0 is
// the control: nothing refused, so a refusal in the other modes is the
// harness's doing. In the mount modes clone succeeds and the child is PID 1
// of a new PID namespace in a new user namespace: the refusal comes after
// the namespaces exist, which is mode 2 and not mode 1.
func TestHostileProbe(t *testing.T) {
	want := map[string]string{
		"0": "clone: ok\npid: 1\nuserns: new\nmount-private: ok\n",
		"1": "clone: EPERM\n",
		"2": "clone: EACCES\n",
		"3": "clone: ok\npid: 1\nuserns: new\nmount-private: EPERM\n",
		"4": "clone: ok\npid: 1\nuserns: new\nmount-private: EACCES\n",
		"5": "clone: ENOSPC\n",
	}
	for _, u := range users {
		for _, mode := range []string{"0", "1", "2", "3", "4", "5"} {
			t.Run(u.name+"/mode"+mode, func(t *testing.T) {
				if got := probeHostile(t, u, mode); got != want[mode] {
					t.Errorf("hostile %s probe as %s:\n%s\nwant:\n%s", mode, u.name, got, want[mode])
				}
			})
		}
	}
}

// TestHostileHarnessIsConfined reads the harness's own confinement back:
// a program it runs in modes 1 to 4 has a seccomp filter and no_new_privs,
// as root and unprivileged, and mode 5 leaves the host's limit alone.
func TestHostileHarnessIsConfined(t *testing.T) {
	before, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		for _, m := range append(denialModes, usernsLimit) {
			t.Run(u.name+"/"+m.name(), func(t *testing.T) {
				r := runHostile(t, u, workDir(t, u), []string{"WSH_NO_SANDBOX=1"}, m.arg, "cat /proc/self/status /proc/sys/user/max_user_namespaces")
				if r.status != 0 {
					t.Fatalf("status %d\n%s", r.status, r.stderr)
				}
				wantSeccomp, wantNNP := "2", "1"
				if m == usernsLimit {
					wantSeccomp, wantNNP = "0", "0"
					if !strings.HasSuffix(r.stdout, "\n0\n") {
						t.Errorf("user.max_user_namespaces in mode 5 is not 0:\n%s", r.stdout)
					}
				}
				if got := statusField(t, r.stdout, "Seccomp"); got != wantSeccomp {
					t.Errorf("Seccomp = %s, want %s", got, wantSeccomp)
				}
				if got := statusField(t, r.stdout, "NoNewPrivs"); got != wantNNP {
					t.Errorf("NoNewPrivs = %s, want %s", got, wantNNP)
				}
			})
		}
	}
	after, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("the host's user.max_user_namespaces changed: %q, was %q", after, before)
	}
}
