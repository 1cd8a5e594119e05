//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"wsh/config"
	"wsh/shell"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
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
		{config.Config{NoSandbox: true, RequireSandbox: true}, "WSH_NO_SANDBOX"},
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

// TestInterpOptionsCannotReplaceTheJail: an interpreter option that would
// replace one of wsh's handlers, or freeze the exec chain without wsh's
// middleware (an option that runs Reset), is refused by New with an error
// naming it; a middleware that calls next is composed: it sees the
// command, which runs in the jail (Seccomp read back).
func TestInterpOptionsCannotReplaceTheJail(t *testing.T) {
	open := func(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
		return interp.DefaultOpenHandler()(ctx, name, flag, perm)
	}
	cases := []struct {
		name string
		opt  interp.RunnerOption
		want string
	}{
		{"OpenHandler", interp.OpenHandler(open), "interp.OpenHandler"},
		{"StatHandler", interp.StatHandler(interp.DefaultStatHandler()), "interp.StatHandler"},
		{"ReadDirHandler2", interp.ReadDirHandler2(interp.DefaultReadDirHandler2()), "interp.ReadDirHandler2"},
		{"AccessHandler", interp.AccessHandler(interp.DefaultAccessHandler()), "interp.AccessHandler"},
		{"Reset", func(r *interp.Runner) error { r.Reset(); return nil }, "exec middleware"},
		{"ExecHandlers without next", interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return interp.DefaultExecHandler(time.Second)
		}), "exec middleware"},
		{"ExecHandler", interp.ExecHandler(interp.DefaultExecHandler(time.Second)), "interp.ExecHandler"},
		{"Env", interp.Env(expand.ListEnviron("PATH=/usr/bin:/bin")), "interp.Env"},
	}
	for _, c := range cases {
		r, err := shell.New(shell.StdIO(nil, nil, nil), shell.Dir(t.TempDir()), shell.Interp(c.opt))
		if err == nil {
			r.Close()
			t.Errorf("%s: accepted", c.name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
	var seen []string
	var out strings.Builder
	logged := interp.ExecHandlers(func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			seen = append(seen, args[0])
			return next(ctx, args)
		}
	})
	r, err := shell.New(shell.StdIO(nil, &out, &out), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}), shell.Interp(logged))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Run(context.Background(), "grep Seccomp: /proc/self/status"); err != nil {
		t.Fatal(err)
	}
	// New's check of the handlers passed one command through it.
	if out.String() != "Seccomp:\t2\n" || !slices.Equal(seen, []string{"wsh-probe-exec", "grep"}) {
		t.Errorf("a composed middleware: output %q, saw %q; want the jail's Seccomp 2 and [wsh-probe-exec grep]", out.String(), seen)
	}
}
