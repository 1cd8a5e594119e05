//go:build linux && cgo

package confine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
)

// TestRunScriptRefusesHidden: degraded (or opted out), a script without #!
// is read by wsh on the host and run by its interpreter; a command can swap
// it for a symlink to anything between the failed exec and that read. A
// hidden file is refused and nothing of it is run or shown; a device or a
// FIFO is refused, not read for ever.
func TestRunScriptRefusesHidden(t *testing.T) {
	work, secret := t.TempDir(), t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	secret, _ = filepath.EvalSymlinks(secret)
	mustDo(t, os.WriteFile(filepath.Join(secret, "key"), []byte("echo LEAKED-SECRET\n"), 0o644))
	mustDo(t, os.Symlink(filepath.Join(secret, "key"), filepath.Join(work, "x")))
	mustDo(t, os.WriteFile(filepath.Join(work, "plain"), []byte("echo plain-script\n"), 0o755))
	env := []string{"PATH=/usr/bin:/bin"}
	j, err := NewJailer(config.Config{Hide: []string{secret}, Network: config.NetworkNone, UnixSockets: config.UnixDeny}, work, env, io.Discard)
	mustDo(t, err)
	defer j.Close()
	run := func(path string) (string, error) {
		var out bytes.Buffer
		c := &command{
			hc:   interp.HandlerContext{Env: expand.ListEnviron(env...), Dir: work, Stdout: &out, Stderr: &out},
			path: path, args: []string{path}, env: env,
		}
		err := j.runScript(context.Background(), c)
		return out.String(), err
	}
	out, err := run(filepath.Join(work, "x"))
	if strings.Contains(out, "LEAKED") || err == nil || !strings.Contains(strings.ToLower(out), "permission denied") {
		t.Errorf("a script that leads to a hidden file: err %v, output:\n%s\nwant it refused (permission denied) and nothing shown", err, out)
	}
	out, err = run(filepath.Join(work, "plain"))
	if err != nil || out != "plain-script\n" {
		t.Errorf("a plain script: err %v, output %q", err, out)
	}

	// What the path may lead to instead: a device that never ends, a FIFO
	// nobody writes (a blocking open would hang wsh): refused at once.
	mustDo(t, os.Symlink("/dev/zero", filepath.Join(work, "zero")))
	mustDo(t, syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644))
	for _, name := range []string{"zero", "fifo"} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			out, err := run(filepath.Join(work, name))
			if err == nil || !strings.Contains(out, "not a regular file") {
				t.Errorf("a script that is %s: err %v, output %q, want it refused as not a regular file", name, err, out)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reading a script that is %s did not return", name)
		}
	}
}

// TestScriptWithoutShebangRunsInTheJail: where commands are jailed, a file
// without #! (which a jailed command may have written) runs with the
// jail's /bin/sh in a jail, not with wsh's interpreter in wsh's process:
// it sees the jail's view (/run covered), and a read that blocks is
// cancelled with the command.
func TestScriptWithoutShebangRunsInTheJail(t *testing.T) {
	work := t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	mustDo(t, os.WriteFile(filepath.Join(work, "runls"), []byte("for f in /run/*; do echo \"$f\"; done\n"), 0o755))
	mustDo(t, syscall.Mkfifo(filepath.Join(work, "ff"), 0o644))
	mustDo(t, os.WriteFile(filepath.Join(work, "hang"), []byte("read x < ./ff\n"), 0o755))
	var out, errb bytes.Buffer
	r, err := newTestRunner(&out, &errb, work, []string{"PATH=/usr/bin:/bin"})
	mustDo(t, err)
	defer r.Close()
	if err := r.Run(context.Background(), "./runls"); err != nil {
		t.Fatalf("./runls: %v\n%s", err, errb.String())
	}
	if out.String() != "/run/shm\n" {
		t.Errorf("a script without #! lists /run as:\n%s\nwant only the jail's /run/shm", out.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, "./hang") }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("./hang: %v, want the context's error", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a script without #! blocked on a FIFO was not cancelled within 15 s")
	}
}

// TestScriptWithoutShebangEdges: a path typed with a leading dash, a file
// that can be executed but not read (126, as bash), and the helper sh that
// runs such a file getting ENOEXEC itself (126, not another helper).
func TestScriptWithoutShebangEdges(t *testing.T) {
	work := t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	mustDo(t, os.Mkdir(filepath.Join(work, "-x"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(work, "-x", "s"), []byte("echo \"0=$0 1=$1\"\n"), 0o755))
	mustDo(t, os.WriteFile(filepath.Join(work, "unreadable"), []byte("echo read\n"), 0o111))
	var out, errb bytes.Buffer
	r, err := newTestRunner(&out, &errb, work, []string{"PATH=/usr/bin:/bin"})
	mustDo(t, err)
	defer r.Close()
	if err := r.Run(context.Background(), "-x/s q"); err != nil || out.String() != "0=-x/s 1=q\n" {
		t.Errorf("-x/s q: %v, output %q, want 0=-x/s 1=q\n%s", err, out.String(), errb.String())
	}
	errb.Reset()
	err = r.Run(context.Background(), "./unreadable")
	if st, ok := errors.AsType[interp.ExitStatus](err); !ok || st != 126 || !strings.Contains(errb.String(), "./unreadable: Permission denied") {
		t.Errorf("./unreadable (mode 0111): %v\n%s\nwant 126 and Permission denied", err, errb.String())
	}

	j := r.jailer
	var hb bytes.Buffer
	helper := &command{hc: interp.HandlerContext{Dir: work, Stdout: &hb, Stderr: &hb}, path: "/bin/sh",
		args: []string{"sh", "-c", "true"}, of: &command{args: []string{"./s"}}}
	err = j.notExecutable(context.Background(), helper, syscall.ENOEXEC, true)
	if st, ok := errors.AsType[interp.ExitStatus](err); !ok || st != 126 || hb.String() != "wsh: ./s: Exec format error\n" {
		t.Errorf("the helper sh refused with ENOEXEC: %v, output %q; want 126 and the command's own name", err, hb.String())
	}
}

// testRunner is what shell.New makes, for the tests of this package: a
// Jailer and an interpreter whose commands it runs.
type testRunner struct {
	jailer *Jailer
	interp *interp.Runner
}

func newTestRunner(stdout, stderr io.Writer, dir string, environ []string) (*testRunner, error) {
	j, err := NewJailer(config.Config{}, dir, os.Environ(), stderr)
	if err != nil {
		return nil, err
	}
	r, err := j.NewInterp(environ, nil, interp.StdIO(nil, stdout, stderr), interp.Dir(dir))
	if err != nil {
		j.Close()
		return nil, err
	}
	return &testRunner{j, r}, nil
}

func (r *testRunner) Run(ctx context.Context, script string) error {
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		return err
	}
	return r.interp.Run(ctx, f)
}

func (r *testRunner) Close() error { return r.jailer.Close() }

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
