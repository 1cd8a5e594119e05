//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"wsh/shell"
)

// TestCancelStopsJailedCommands cancels the context of a script whose jailed
// command would run for minutes: Run returns within a bounded time, and no
// process of that jail is left.
func TestCancelStopsJailedCommands(t *testing.T) {
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, `sh -c 'sleep 301.25 & sleep 301.5; echo never'`) }()
	waitFor(t, func() bool { return len(procsWith("301.5")) > 0 }, "the jailed sleep to start")
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s of the cancellation")
	}
	t.Logf("Run returned %v after the cancellation", time.Since(start))
	waitFor(t, func() bool { return len(procsWith("301.")) == 0 }, "every process of the jail to be gone")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s; left: %v", what, procsWith("301."))
}

// procsWith lists the host's processes whose command line contains s.
func procsWith(s string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), s) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestCancelDuringSetup cancels jailed commands at moments spread over the
// jail's start and setup: every Run returns promptly with the context's
// error, nothing reaches the script's stderr (no Go runtime output from the
// init, no wsh message), and nothing of the jails is left.
func TestCancelDuringSetup(t *testing.T) {
	var stderr strings.Builder
	r, err := shell.New(shell.StdIO(nil, os.Stdout, &stderr), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i)*100*time.Microsecond)
		start := time.Now()
		err := r.Run(ctx, `/bin/sleep 302.5`)
		cancel()
		// Well under the 2 s between SIGTERM and SIGKILL: a jail whose
		// target has not started is killed at once.
		if took := time.Since(start); took > time.Second {
			t.Errorf("cancelled after %v: Run took %v", time.Duration(i)*100*time.Microsecond, took)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled after %v: Run = %v, want the context's error", time.Duration(i)*100*time.Microsecond, err)
		}
	}
	for _, s := range []string{"goroutine", "SIG", "panic", "wsh:"} {
		if strings.Contains(stderr.String(), s) {
			t.Errorf("stderr has %q:\n%s", s, stderr.String())
		}
	}
	waitFor(t, func() bool { return len(procsWith("302.5")) == 0 }, "every process of the jails to be gone")
}

// TestKillTimeoutOption: a command that ignores SIGTERM is killed the
// KillTimeout after its cancellation, not the default two seconds after.
func TestKillTimeoutOption(t *testing.T) {
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}),
		shell.KillTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { time.Sleep(300 * time.Millisecond); cancel() }() // the target has started by then
	start := time.Now()
	r.Run(ctx, `/bin/sh -c 'trap "" TERM; sleep 5'`)
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("Run took %v after a cancel at 300ms with a KillTimeout of 100ms", took)
	}
	if _, err := shell.New(shell.KillTimeout(-time.Second)); err == nil {
		t.Error("a negative KillTimeout was accepted")
	}
}
