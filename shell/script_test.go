package shell

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"wsh/config"
)

// TestRunScriptRefusesHidden: a script without #! (ENOEXEC in the jail) is
// read by wsh itself, on the host; a command can swap the script for a
// symlink to a hidden file between the jail's exec and that read. The read
// is refused like any read of a hidden file, and nothing of the file is
// run or shown.
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
	if strings.Contains(out, "LEAKED") || err == nil || !strings.Contains(out, "permission denied") {
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
