//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"wsh/shell"
)

// TestConcurrentRunIsRefused: a second Run while one is under way on the
// same Runner returns ErrBusy at once, without running anything: two
// scripts in one interpreter would corrupt each other's variables.
func TestConcurrentRunIsRefused(t *testing.T) {
	var out strings.Builder
	var mu sync.Mutex
	r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(nil, lockedWriter{&mu, &out}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	started := make(chan error, 1)
	go func() { started <- r.Run(context.Background(), "echo first; sleep 2; echo first done") }()
	for i := 0; ; i++ { // until the first Run printed
		mu.Lock()
		s := out.String()
		mu.Unlock()
		if strings.Contains(s, "first\n") {
			break
		}
		if i > 1000 {
			t.Fatal("the first Run did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	begun := time.Now()
	err = r.Run(context.Background(), "echo second")
	if !errors.Is(err, shell.ErrBusy) || time.Since(begun) > time.Second {
		t.Errorf("a second Run: %v after %v, want ErrBusy at once", err, time.Since(begun))
	}
	if err := <-started; err != nil {
		t.Errorf("the first Run: %v", err)
	}
	if got := out.String(); got != "first\nfirst done\n" {
		t.Errorf("output %q: the second Run ran something", got)
	}
	if err := r.Run(context.Background(), "true"); err != nil {
		t.Errorf("a Run after the first ended: %v", err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestDeadlineInWait: a Run whose context ends in wait returns the
// context's error, not status 0 as if the jobs had ended.
func TestDeadlineInWait(t *testing.T) {
	r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = r.Run(ctx, "sleep 30 & wait")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run of `sleep 30 & wait` with a 1 s deadline: %v, want the deadline", err)
	}
}

// TestEnvNilAndNoPath: Env(nil) is an error (it would give the commands
// the process's whole environment); an environment without PATH gets the
// default PATH, said once.
func TestEnvNilAndNoPath(t *testing.T) {
	if _, err := shell.New(shell.Env(nil)); err == nil || !strings.Contains(err.Error(), "Env(os.Environ())") {
		t.Errorf("Env(nil): %v, want an error that says how to inherit", err)
	}
	var out, warn strings.Builder
	r, err := shell.New(shell.Dir(t.TempDir()), shell.Env([]string{"A=1"}), shell.StdIO(nil, &out, &out), shell.Warnings(&warn))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 {
		if err := r.Run(context.Background(), `echo "$PATH"; ls -d /`); err != nil {
			t.Fatalf("a command with no PATH given: %v\n%s", err, out.String())
		}
	}
	if want := shell.DefaultPath + "\n/\n"; out.String() != want+want {
		t.Errorf("output %q, want %q twice", out.String(), want)
	}
	if n := strings.Count(warn.String(), "has no PATH"); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, warn.String())
	}
}
