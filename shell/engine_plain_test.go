//go:build !linux || !cgo

package shell_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"wsh/config"
	"wsh/shell"
)

// TestNoJailHere: where this build has no jail (CGO_ENABLED=0 go test
// ./shell runs this on Linux), a Runner runs its commands unsandboxed and
// says so: its Status is Degraded with ErrNotSupported as the cause, the
// one warning is said once per process on the Runners' stderr, and once
// per Runner to a writer given with Warnings; WSH_REQUIRE_SANDBOX fails
// New with an error that is ErrNotSupported; the opt-out is OptedOut,
// without a warning.
func TestNoJailHere(t *testing.T) {
	var errb strings.Builder
	var out strings.Builder
	// A Runner whose stderr discards does not use up the process's warning.
	if r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(t.TempDir()), shell.WithConfig(config.Config{})); err == nil {
		r.Run(context.Background(), "/bin/true")
		r.Close()
	}
	for i := range 2 {
		r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(t.TempDir()), shell.WithConfig(config.Config{}))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(context.Background(), "/bin/echo ran"); err != nil {
			t.Fatal(err)
		}
		st := r.Status()
		if st.Mode != shell.Degraded || st.Cause == nil || !errors.Is(st.Cause, shell.ErrNotSupported) {
			t.Errorf("Runner %d: status %+v, want Degraded by ErrNotSupported", i, st)
		}
		r.Close()
	}
	if out.String() != "ran\nran\n" {
		t.Errorf("output %q", out.String())
	}
	if n := strings.Count(errb.String(), "wsh: warning: "); n != 1 {
		t.Errorf("%d warnings on the Runners' stderr, want 1 for the process:\n%s", n, errb.String())
	}
	for i := range 2 {
		var w strings.Builder
		r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(t.TempDir()), shell.WithConfig(config.Config{}), shell.Warnings(&w))
		if err != nil {
			t.Fatal(err)
		}
		r.Run(context.Background(), "/bin/true; /bin/true")
		r.Close()
		if n := strings.Count(w.String(), "wsh: warning: "); n != 1 {
			t.Errorf("Runner %d: %d warnings to its Warnings writer, want 1:\n%s", i, n, w.String())
		}
	}
	_, err := shell.New(shell.Dir(t.TempDir()), shell.WithConfig(config.Config{RequireSandbox: config.FloorFull}))
	if !errors.Is(err, shell.ErrNotSupported) {
		t.Errorf("RequireSandbox: %v, want ErrNotSupported", err)
	}
	var w strings.Builder
	r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(t.TempDir()), shell.WithConfig(config.Config{NoSandbox: true}), shell.Warnings(&w))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Run(context.Background(), "/bin/true")
	if st := r.Status(); st.Mode != shell.OptedOut || w.Len() != 0 {
		t.Errorf("opted out: %+v, warning %q", st, w.String())
	}
}

// TestNoJailJobs: where this build has no jail, a background job runs
// and is waited for with nothing said of wsh's own job bookkeeping (the
// calls job.Mark adds are wsh's, not commands to look up), and the
// caller's CallHandler does not see them.
func TestNoJailJobs(t *testing.T) {
	var out, errb strings.Builder
	var mu sync.Mutex
	var seen []string
	r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(t.TempDir()), shell.WithConfig(config.Config{NoSandbox: true}),
		shell.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			mu.Lock() // a job's calls come from its own goroutine
			seen = append(seen, args[0])
			mu.Unlock()
			return args, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), "sleep 0.1 & wait; echo done"); err != nil || out.String() != "done\n" || errb.Len() != 0 {
		t.Errorf("Run: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.HasPrefix(s, "wsh-job:") {
			t.Errorf("the CallHandler saw wsh's own %q (all: %q)", s, seen)
		}
	}
}
