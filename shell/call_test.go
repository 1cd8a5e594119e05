//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"io"
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
	// The first Run holds until the test writes a line to its stdin.
	in, release := io.Pipe()
	defer release.Close()
	r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(in, lockedWriter{&mu, &out}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := make(chan error, 1)
	go func() { first <- r.Run(context.Background(), "echo first; read -r line; echo first done") }()
	for { // until the first Run printed (it then waits in read)
		mu.Lock()
		s := out.String()
		mu.Unlock()
		if strings.Contains(s, "first\n") {
			break
		}
		select {
		case err := <-first:
			t.Fatalf("the first Run ended early: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	second := make(chan error, 1)
	go func() { second <- r.Run(context.Background(), "echo second") }()
	select {
	case err := <-second:
		if !errors.Is(err, shell.ErrBusy) {
			t.Errorf("a second Run: %v, want ErrBusy", err)
		}
	case <-time.After(time.Minute): // a hang, not a speed: it waits for the first
		t.Fatal("a second Run waited for the first")
	}
	release.Write([]byte("\n"))
	if err := <-first; err != nil {
		t.Errorf("the first Run: %v", err)
	}
	mu.Lock()
	got := out.String()
	mu.Unlock()
	if got != "first\nfirst done\n" {
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
