//go:build linux && cgo

package confine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/internal/confine"
)

// TestNewInterpKeepsTheCommandsTMPDIR: the interpreter's own temporary
// directory (the FIFOs of process substitution, read-only to commands)
// never becomes the commands' TMPDIR, also after a Reset; an interp.Env of
// the caller's, which would move the FIFOs where commands write, is
// refused.
func TestNewInterpKeepsTheCommandsTMPDIR(t *testing.T) {
	dir := t.TempDir()
	environ := []string{"PATH=/usr/bin:/bin", "TMPDIR=" + dir}
	j, err := confine.NewJailer(config.Config{}, dir, environ, io.Discard)
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

// TestJailerChecksItsConfig: NewJailer checks the configuration as
// WithConfig does, and a nil warning writer discards.
func TestJailerChecksItsConfig(t *testing.T) {
	for _, cfg := range []config.Config{{Writable: []string{"/"}}, {Writable: []string{"/dev/shm"}}, {NoSandbox: true, RequireSandbox: config.FloorFull}, {Hide: []string{"relative"}}} {
		var ce *config.Error
		if _, err := confine.NewJailer(cfg, t.TempDir(), nil, nil); !errors.As(err, &ce) {
			t.Errorf("NewJailer(%+v) = %v, want a *config.Error", cfg, err)
		}
	}
	j, err := confine.NewJailer(config.Config{}, "/", []string{"PATH=/usr/bin:/bin"}, nil)
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

// A Jailer makes an interp.Runner of your own whose external commands run
// in the jail and whose redirections obey the jail's rules.
func ExampleJailer_NewInterp() {
	environ := []string{"PATH=/usr/bin:/bin"}
	cfg, err := config.Load(environ)
	if err != nil {
		fmt.Println(err)
		return
	}
	j, err := confine.NewJailer(cfg, os.TempDir(), environ, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	r, err := j.NewInterp(environ, nil, interp.StdIO(nil, os.Stdout, os.Stdout), interp.Dir(os.TempDir()))
	if err != nil {
		fmt.Println(err)
		return
	}
	file, _ := syntax.NewParser().Parse(strings.NewReader(`head -c 13 /proc/1/cmdline; echo; echo x > /etc/wsh-example; sh -c 'exit 3'`), "")
	err = r.Run(context.Background(), file)
	fmt.Println("error:", err)
	// Output:
	// wsh-jail-init
	// wsh: /etc/wsh-example: Read-only file system
	// error: exit status 3
}
