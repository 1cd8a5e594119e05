package shell_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

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

// TestNewInterpKeepsTheCommandsTMPDIR: the interpreter's own temporary
// directory (the FIFOs of process substitution, read-only to commands)
// never becomes the commands' TMPDIR, also after a Reset; an interp.Env of
// the caller's, which would move the FIFOs where commands write, is
// refused.
func TestNewInterpKeepsTheCommandsTMPDIR(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir}
	j, err := shell.NewJailer(config.Config{}, dir, environ, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var out strings.Builder
	r, err := j.NewInterp(environ, nil, interp.StdIO(nil, &out, &out), interp.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	script, err := syntax.NewParser().Parse(strings.NewReader(`echo "$TMPDIR"; sh -c 'echo "$TMPDIR"'; cat <(echo fifo)`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := dir + "\n" + dir + "\nfifo\n"
	for i := range 2 {
		out.Reset()
		if err := r.Run(context.Background(), script); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out.String())
		}
		if out.String() != want {
			t.Errorf("run %d: got %q, want %q", i, out.String(), want)
		}
		r.Reset()
	}
	if _, err := j.NewInterp(environ, nil, interp.Env(expand.ListEnviron(environ...))); err == nil {
		t.Error("an interp.Env option was accepted")
	}
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

// TestJailerChecksItsConfig: NewJailer checks the configuration as
// WithConfig does, and a nil warning writer discards.
func TestJailerChecksItsConfig(t *testing.T) {
	for _, cfg := range []config.Config{{Writable: []string{"/"}}, {Writable: []string{"/dev/shm"}}, {NoSandbox: true, RequireSandbox: true}, {Hide: []string{"relative"}}} {
		var ce *config.Error
		if _, err := shell.NewJailer(cfg, t.TempDir(), nil, nil); !errors.As(err, &ce) {
			t.Errorf("NewJailer(%+v) = %v, want a *config.Error", cfg, err)
		}
	}
	j, err := shell.NewJailer(config.Config{}, "/", []string{"PATH=/usr/bin:/bin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, err := j.NewInterp([]string{"PATH=/usr/bin:/bin"}, nil, interp.StdIO(nil, io.Discard, io.Discard), interp.Dir("/"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := syntax.NewParser().Parse(strings.NewReader("/bin/true"), "")
	if err := r.Run(context.Background(), f); err != nil { // says the start directory is not writable
		t.Fatal(err)
	}
}

// TestCallersResetKeepsTheJail: an option of the caller's that runs the
// interpreter's Reset (which builds the exec chain) still gets wsh's exec
// middleware: the command runs in the jail.
func TestCallersResetKeepsTheJail(t *testing.T) {
	dir := t.TempDir()
	j, err := shell.NewJailer(config.Config{}, dir, []string{"PATH=/usr/bin:/bin"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var out strings.Builder
	r, err := j.NewInterp([]string{"PATH=/usr/bin:/bin"}, nil, interp.StdIO(nil, &out, &out), interp.Dir(dir),
		func(r *interp.Runner) error { r.Reset(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	f, _ := syntax.NewParser().Parse(strings.NewReader("grep Seccomp: /proc/self/status"), "")
	if err := r.Run(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Seccomp:\t2\n" {
		t.Errorf("after the caller's Reset: %q", out.String())
	}
}
