package shell

import (
	"bytes"
	"context"
	"fmt"
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
// read again to be run by wsh's interpreter; a command can swap it for a
// symlink to anything between the jail's exec and that read. The read is
// made in a jail of its own, with the jail's view: a hidden file is
// refused and nothing of it is run or shown; what only the host sees (its
// /proc) is not there; a device or FIFO is refused, not read for ever.
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

	// A file of the host's /proc, which the jail's /proc does not have:
	// this test process's command name.
	comm, err := os.ReadFile("/proc/self/comm")
	mustDo(t, err)
	mustDo(t, os.Symlink(fmt.Sprintf("/proc/%d/comm", os.Getpid()), filepath.Join(work, "hostproc")))
	out, err = run(filepath.Join(work, "hostproc"))
	if err == nil || strings.Contains(out, strings.TrimSpace(string(comm))) {
		t.Errorf("a script that leads to the host's /proc: err %v, output %q, want it not found", err, out)
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
