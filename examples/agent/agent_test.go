package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wsh/config"
	"wsh/jail"
	"wsh/shell"

	"mvdan.cc/sh/v3/interp"
)

// TestMain is what every embedder's tests need: the jail's init is the
// test binary, re-executed, so jail.Init comes first.
func TestMain(m *testing.M) {
	jail.Init()
	if h := os.Getenv("AGENT_HELPER"); h != "" {
		os.Exit(helper(h))
	}
	os.Exit(m.Run())
}

// TestToolCalls: 20 calls from 4 goroutines, each with its own working
// directory, buffers and deadline. Each call's commands run in the jail
// (Seccomp 2, read back), write where the call's directory is, and a call
// past its deadline ends with the deadline, soon.
func TestToolCalls(t *testing.T) {
	var calls []call
	for i := range 20 {
		dir := t.TempDir()
		script := fmt.Sprintf(`grep Seccomp: /proc/self/status; echo call%d > out; cat out; echo to-stderr >&2; exit %d`, i, i%3)
		calls = append(calls, call{Script: script, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute})
	}
	slow := call{Script: "sleep 30", Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 300 * time.Millisecond}
	calls = append(calls, slow)
	var notices lockedBuffer
	start := time.Now()
	results := runCalls(context.Background(), calls, 4, &notices)
	for i, r := range results[:20] {
		want := fmt.Sprintf("Seccomp:\t2\ncall%d\n", i)
		if r.Stdout != want || r.Stderr != "to-stderr\n" || r.Status != i%3 || r.Err != nil {
			t.Errorf("call %d: %+v, want stdout %q, stderr to-stderr, status %d", i, r, want, i%3)
		}
		if r.InForce.Mode != shell.Confined {
			t.Errorf("call %d: %s, want confined", i, r.InForce.Mode)
		}
		if b, err := os.ReadFile(filepath.Join(calls[i].Dir, "out")); err != nil || string(b) != fmt.Sprintf("call%d\n", i) {
			t.Errorf("call %d wrote %q (%v) in its directory", i, b, err)
		}
	}
	if r := results[20]; !errors.Is(r.Err, context.DeadlineExceeded) || r.Status != -1 {
		t.Errorf("the slow call: %+v, want its deadline", r)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the calls took %v: the slow one was not cut at its deadline", d)
	}
	if notices.String() != "" {
		t.Errorf("notices on a host that allows the jail:\n%s", notices.String())
	}
}

// TestModelEnvCannotSwitchTheJailOff: WSH_NO_SANDBOX=1 and WSH_WRITABLE in
// the environment the model chose are plain variables: the jail stays on
// (Seccomp 2 read back) and /etc read-only.
func TestModelEnvCannotSwitchTheJailOff(t *testing.T) {
	c := call{Script: `grep Seccomp: /proc/self/status; touch /etc/agent-probe 2>/dev/null || echo etc read-only; echo "$WSH_NO_SANDBOX"`,
		Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin", "WSH_NO_SANDBOX=1", "WSH_WRITABLE=/etc"}, Timeout: time.Minute}
	var notices lockedBuffer
	r := runCall(context.Background(), c, &notices)
	if r.Stdout != "Seccomp:\t2\netc read-only\n1\n" || r.InForce.Mode != shell.Confined {
		t.Errorf("%+v", r)
	}
}

// TestConfigInCodeIsChecked: a configuration given in code is checked as
// the environment is: a *config.Error naming the variable.
func TestConfigInCodeIsChecked(t *testing.T) {
	for _, cfg := range []config.Config{{Writable: []string{"relative"}}, {Writable: []string{"/"}}, {NoSandbox: true, RequireSandbox: config.FloorFull}, {Network: "bogus"}} {
		_, err := shell.New(shell.WithConfig(cfg), shell.Dir(t.TempDir()))
		if ce, ok := errors.AsType[*config.Error](err); !ok || ce.Var == "" {
			t.Errorf("WithConfig(%+v): %v, want a *config.Error", cfg, err)
		}
	}
}

// TestWithoutInit: a program that did not call jail.Init gets ErrNoInit
// from New within 2 s, naming jail.Init, and has started no process.
func TestWithoutInit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "noinit")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/noinit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = t.TempDir()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if took > 2*time.Second || !strings.Contains(string(out), "jail.Init() was not called") || !strings.Contains(string(out), "\nchildren: 0\n") {
		t.Errorf("without jail.Init, after %v:\n%s\nwant the error naming jail.Init within 2 s and no child", took, out)
	}
}

// TestUnderAHostileHost runs the helpers below under wsh's hostile-host
// harness, which refuses the jail as hosts do: mode 1 refuses the
// namespaces (EPERM, as Docker's default profile), mode 5 has a user
// namespace limit of 0 (ENOSPC).
func TestUnderAHostileHost(t *testing.T) {
	hostile := filepath.Join(t.TempDir(), "hostile")
	build := exec.Command("go", "build", "-o", hostile, "./internal/e2e/hostile")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the harness: %v\n%s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, mode, name string, env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, hostile, mode, "--", self)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), append(env, "AGENT_HELPER="+name)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper %s in mode %s: %v\n%s", name, mode, err, out)
		}
		return string(out)
	}
	t.Run("operator's WSH_REQUIRE_SANDBOX holds with the embedder's Env", func(t *testing.T) {
		got := run(t, "1", "require", "WSH_REQUIRE_SANDBOX=1")
		if got != "mode refusing\nstatus 126\nmarker absent\nerrno EPERM denied true\n" {
			t.Errorf("got:\n%s", got)
		}
	})
	t.Run("nil streams do not panic", func(t *testing.T) {
		if got := run(t, "1", "nil"); got != "ran\nmode degraded\n" {
			t.Errorf("got:\n%s", got)
		}
	})
	t.Run("one warning for the process", func(t *testing.T) {
		got := run(t, "1", "warn")
		if n := strings.Count(got, "wsh: warning: "); n != 1 || !strings.HasSuffix(got, "given writer: 1\n") {
			t.Errorf("%d warnings, want one on stderr and one to the given writer:\n%s", n, got)
		}
	})
	t.Run("a jail that cannot be made is a *shell.JailError", func(t *testing.T) {
		if got := run(t, "5", "enospc"); got != "JailError: mode 1 step clone errno ENOSPC denied false\n" {
			t.Errorf("got:\n%s", got)
		}
	})
}

// helper runs one scenario of TestUnderAHostileHost, under the harness,
// and prints what it saw.
func helper(name string) int {
	dir, _ := os.Getwd()
	env := []string{"PATH=/usr/bin:/bin"} // the embedder's own list: no WSH_*
	switch name {
	case "require":
		r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(dir), shell.Env(env), shell.Warnings(os.Stdout))
		if err != nil {
			fmt.Println("New:", err)
			return 0
		}
		defer r.Close()
		err = r.Run(context.Background(), "touch marker 2>/dev/null")
		st := r.Status()
		fmt.Println("mode", st.Mode)
		fmt.Println("status", exitCode(err))
		if _, err := os.Stat("marker"); err != nil {
			fmt.Println("marker absent")
		} else {
			fmt.Println("marker present")
		}
		if st.Cause != nil {
			fmt.Println("errno", errnoName(st.Cause.Errno), "denied", st.Cause.Denied)
		}
	case "nil":
		r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(dir), shell.Env(env))
		if err != nil {
			fmt.Println("New:", err)
			return 0
		}
		defer r.Close()
		if err := r.Run(context.Background(), "/bin/echo discarded; /bin/ls /nonexistent"); err != nil {
			fmt.Println("ran")
		}
		fmt.Println("mode", r.Status().Mode)
	case "warn":
		// A Runner whose stderr discards does not use up the warning.
		if r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(dir), shell.Env(env)); err == nil {
			r.Run(context.Background(), "/bin/true")
			r.Close()
		}
		for range 2 {
			r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stdout), shell.Dir(dir), shell.Env(env))
			if err != nil {
				fmt.Println("New:", err)
				return 0
			}
			r.Run(context.Background(), "/bin/true")
			r.Close()
		}
		var w lockedBuffer
		r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(dir), shell.Env(env), shell.Warnings(&w))
		if err != nil {
			fmt.Println("New:", err)
			return 0
		}
		r.Run(context.Background(), "/bin/true; /bin/true")
		r.Close()
		fmt.Println("given writer:", strings.Count(w.String(), "wsh: warning: "))
	case "enospc":
		_, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stdout), shell.Dir(dir), shell.Env(env))
		var je *shell.JailError
		if !errors.As(err, &je) {
			fmt.Println("New:", err)
			return 0
		}
		fmt.Println("JailError: mode", je.Mode, "step", je.Step, "errno", errnoName(je.Errno), "denied", je.Denied)
	default:
		fmt.Println("no helper", name)
		return 2
	}
	return 0
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(es)
	}
	return -1
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.EACCES:
		return "EACCES"
	case syscall.ENOSPC:
		return "ENOSPC"
	}
	return e.Error()
}
