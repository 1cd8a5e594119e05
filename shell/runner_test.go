//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wsh/config"
	"wsh/shell"
)

// TestEnvIsNotTheConfiguration: the commands' environment an embedder
// passes (with variables a model may have chosen) does not configure the
// jail: WSH_NO_SANDBOX in it leaves the jail on (Seccomp read back in the
// jail), WSH_WRITABLE in it makes nothing writable; both are plain
// variables to the commands.
func TestEnvIsNotTheConfiguration(t *testing.T) {
	var out, errb strings.Builder
	r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(t.TempDir()),
		shell.Env([]string{"PATH=/usr/bin:/bin", "WSH_NO_SANDBOX=1", "WSH_WRITABLE=/etc"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// test -w reads the mount's flags; it writes nothing.
	if err := r.Run(context.Background(), `grep Seccomp: /proc/self/status; sh -c 'test -w /etc && echo etc writable || echo etc read-only'; sh -c 'echo "$WSH_NO_SANDBOX"'`); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if got, want := out.String(), "Seccomp:\t2\netc read-only\n1\n"; got != want {
		t.Errorf("got %q, want %q\n%s", got, want, errb.String())
	}
}

// TestNilStreamsDiscard: nil standard streams discard, as in mvdan.cc/sh;
// what wsh itself says (here that the start directory / is not writable)
// goes nowhere rather than panicking.
func TestNilStreamsDiscard(t *testing.T) {
	r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir("/"), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), "/bin/echo discarded; /bin/ls /nonexistent"); err == nil {
		t.Error("ls of a missing path succeeded")
	}
}

// TestWithConfigIsChecked: a configuration made in code is checked as one
// from the environment is, with the same *config.Error.
func TestWithConfigIsChecked(t *testing.T) {
	cases := []struct {
		cfg      config.Config
		variable string
	}{
		{config.Config{Writable: []string{"relative/dir"}}, "WSH_WRITABLE"},
		{config.Config{Writable: []string{"/"}}, "WSH_WRITABLE"},
		{config.Config{Hide: []string{"~/.ssh"}}, "WSH_HIDE"},
		{config.Config{NoSandbox: true, RequireSandbox: config.FloorFull}, "WSH_NO_SANDBOX"},
		{config.Config{Network: "bogus"}, "WSH_NETWORK"},
		{config.Config{UnixSockets: "maybe"}, "WSH_UNIX_SOCKETS"},
		{config.Config{Home: "rw"}, "WSH_HOME"},
		{config.Config{Protect: []string{"../x"}}, "WSH_PROTECT"},
	}
	for _, c := range cases {
		_, err := shell.New(shell.WithConfig(c.cfg), shell.Dir(t.TempDir()))
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Var != c.variable {
			t.Errorf("WithConfig(%+v): %v, want a *config.Error for %s", c.cfg, err, c.variable)
		}
	}
	r, err := shell.New(shell.WithConfig(config.Config{}), shell.Dir(t.TempDir()), shell.StdIO(nil, nil, nil))
	if err != nil {
		t.Fatalf("the zero Config (every default): %v", err)
	}
	r.Close()
}

// TestEnvDoesNotShapeTheJail: TMPDIR in Env is a plain variable to the
// commands: the directory it names is not made writable.
func TestEnvDoesNotShapeTheJail(t *testing.T) {
	// Not in /tmp, which is writable anyway.
	dir, err := os.MkdirTemp("/home", "wsh-envtmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var out strings.Builder
	r, err := shell.New(shell.StdIO(nil, &out, &out), shell.Dir(t.TempDir()),
		shell.Env([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// test -w reads the mount's flags; it writes nothing.
	if err := r.Run(context.Background(), `sh -c 'test -w "$TMPDIR" && echo writable || echo read-only'`); err != nil {
		t.Fatal(err)
	}
	if out.String() != "read-only\n" {
		t.Errorf("TMPDIR from Env in the jail: %q", out.String())
	}
}

// TestCallHandlerComposes: a CallHandler of the caller's sees every
// command (builtins too) and may change its arguments or refuse it; what
// it lets through, or names instead, still runs in the jail (Seccomp read
// back). A nil handler is refused.
func TestCallHandlerComposes(t *testing.T) {
	var seen []string
	h := func(ctx context.Context, args []string) ([]string, error) {
		seen = append(seen, args[0])
		switch args[0] {
		case "status":
			return []string{"grep", "Seccomp:", "/proc/self/status"}, nil
		case "forbidden":
			return nil, errors.New("not allowed")
		}
		return args, nil
	}
	var out, errb strings.Builder
	r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}), shell.CallHandler(h))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), "echo hi; status"); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if out.String() != "hi\nSeccomp:\t2\n" || !slices.Equal(seen, []string{"echo", "status"}) {
		t.Errorf("output %q, saw %q; want hi, the jail's Seccomp 2, and [echo status]", out.String(), seen)
	}
	if err := r.Run(context.Background(), "forbidden; echo after"); err == nil || strings.Contains(out.String(), "after") {
		t.Errorf("a refused command: %v, output %q", err, out.String())
	}
	if _, err := shell.New(shell.CallHandler(nil)); err == nil {
		t.Error("a nil CallHandler was accepted")
	}
}

// TestRunAfterClose: a Run after Close is ErrClosed, and runs nothing (the
// interpreter's directory for FIFOs is gone, and another process could
// make one by that name); a Close while a Run is under way takes effect
// when it returns: the Run ends as it would have, and the directory is
// removed after.
func TestRunAfterClose(t *testing.T) {
	// The interpreter writes from the goroutines of process
	// substitutions, and the jail's streams are copied from others.
	var out syncBuffer
	r, err := shell.New(shell.StdIO(nil, &out, &out), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	// The FIFO is read too, so that no goroutine of the interpreter's
	// still waits on it.
	if err := r.Run(context.Background(), "set -- <(true); echo $1; cat $1"); err != nil {
		t.Fatal(err)
	}
	fifoDir := filepath.Dir(strings.TrimSpace(out.String()))
	out.Reset()
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background(), "sleep 0.5; /bin/echo ran; cat <(echo fifo)") }()
	time.Sleep(100 * time.Millisecond)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || out.String() != "ran\nfifo\n" {
		t.Errorf("a Run under way at Close: %v, output %q", err, out.String())
	}
	if _, err := os.Stat(fifoDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the FIFO directory %s after the Run: %v, want it gone", fifoDir, err)
	}
	if err := r.Run(context.Background(), "/bin/echo after"); !errors.Is(err, shell.ErrClosed) || strings.Contains(out.String(), "after") {
		t.Errorf("Run after Close: %v, output %q; want ErrClosed and nothing run", err, out.String())
	}
	if err := r.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestCallHandlerEdges: a handler that returns no arguments is an error,
// not a panic; and the handler sees the commands of a script without #!
// that wsh's own interpreter runs (opted out, here).
func TestCallHandlerEdges(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s"), []byte("echo inner\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	h := func(ctx context.Context, args []string) ([]string, error) {
		mu.Lock()
		seen = append(seen, args[0])
		mu.Unlock()
		if args[0] == "vanish" {
			return nil, nil
		}
		return args, nil
	}
	var out strings.Builder
	r, err := shell.New(shell.StdIO(nil, &out, &out), shell.Dir(dir), shell.Env([]string{"PATH=/usr/bin:/bin"}),
		shell.WithConfig(config.Config{NoSandbox: true}), shell.CallHandler(h))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), "vanish"); err == nil || !strings.Contains(err.Error(), "no arguments") {
		t.Errorf("a handler with no arguments: %v", err)
	}
	if err := r.Run(context.Background(), "./s"); err != nil || out.String() != "inner\n" {
		t.Fatalf("./s: %v, %q", err, out.String())
	}
	if !slices.Contains(seen, "echo") {
		t.Errorf("the handler saw %q, not the script's echo", seen)
	}
}

// syncBuffer is a buffer that several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
