//go:build linux && cgo

package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bashPath is the bash that wsh is compared with; CI has it.
const bashPath = "/usr/bin/bash"

// statusCases run the same command line under bash and under wsh, in a
// directory holding the files of statusFiles. Both must exit with status,
// and print the same standard output (and error, with sameStderr) unless
// stdoutDiffers says why not. A knownDiff is a difference from bash that
// comes from mvdan.cc/sh; the case then checks that wsh still exits with
// wshStatus, so that a change upstream shows.
var statusCases = []struct {
	name          string
	args          []string // after the shell's name
	stdin         string
	status        int
	stdoutDiffers string
	sameStderr    bool
	knownDiff     string
	wshStatus     int
}{
	// wsh -c SCRIPT [NAME [ARG...]]
	{name: "c/last status", args: []string{"-c", "true; sh -c 'exit 3'"}, status: 3},
	{name: "c/false last", args: []string{"-c", "true; false"}, status: 1},
	{name: "c/exit 300", args: []string{"-c", "exit 300"}, status: 44},
	{name: "c/name and args", args: []string{"-c", `echo "$0|$1|$2|$#"`, "name", "a b", "c"}},
	{name: "c/empty name", args: []string{"-c", `echo "[$0]"`, ""}, stdoutDiffers: "mvdan.cc/sh makes an empty $0 'gosh' (interp/vars.go)"},
	{name: "c/option-like name", args: []string{"-c", `echo "$0 $1"`, "-e", "x"}},
	{name: "c/no args", args: []string{"-c", "echo $#"}},
	{name: "c/empty script", args: []string{"-c", ""}},
	{name: "c/ignores stdin", args: []string{"-c", "echo c"}, stdin: "echo stdin\n"},

	// wsh FILE [ARG...]
	{name: "file/args", args: []string{"args.sh", "x", "y z"}},
	{name: "file/status", args: []string{"status.sh"}, status: 4},
	{name: "file/after --", args: []string{"--", "args.sh", "x"}},
	{name: "file/missing", args: []string{"nosuchfile"}, status: 127},
	{name: "file/directory", args: []string{"adir"}, status: 126},
	{name: "file/symlink loop", args: []string{"loop"}, status: 126},
	{name: "file/binary", args: []string{"/bin/true"}, status: 126},
	{name: "file/parse error", args: []string{"parse.sh"}, status: 2,
		stdoutDiffers: "bash runs the lines before the error; wsh parses the whole file first"},

	// the script from standard input
	{name: "stdin/status", stdin: "echo $#; exit 5\n", status: 5},
	{name: "stdin/errexit", args: []string{"-e"}, stdin: "echo a; false; echo b\n", status: 1},
	{name: "stdin/parse error", stdin: "if then\n", status: 2},

	// -e, -u, -x, -o pipefail and their + forms
	{name: "opt/-e", args: []string{"-e", "-c", "echo a; false; echo b"}, status: 1},
	{name: "opt/-e +e", args: []string{"-e", "+e", "-c", "false; echo b"}},
	{name: "opt/-e conditions", args: []string{"-e", "-c", "false || true; if false; then :; fi; ! true; echo b"}},
	{name: "opt/-ec", args: []string{"-ec", "false; echo b"}, status: 1},
	{name: "opt/-c -e", args: []string{"-c", "-e", "false; echo b"}, status: 1},
	{name: "opt/set -e", args: []string{"-c", "set -e; false; echo b"}, status: 1},
	{name: "opt/set -e +e", args: []string{"-c", "set -e; set +e; false; echo b"}},
	{name: "opt/-u", args: []string{"-u", "-c", "echo a; echo $NOPE; echo b"}, status: 127, knownDiff: unboundStatus, wshStatus: 1},
	{name: "opt/-u +u", args: []string{"-u", "+u", "-c", `echo "[$NOPE]"`}},
	{name: "opt/set -u", args: []string{"-c", "set -u; echo a; X=$NOPE; echo b"}, status: 127, knownDiff: unboundStatus, wshStatus: 1},
	{name: "opt/set -u +u", args: []string{"-c", `set -u; set +u; echo "[$NOPE]"`}},
	{name: "opt/-x", args: []string{"-x", "-c", `x=1; echo "a b" $x`}, knownDiff: "mvdan.cc/sh's -x trace joins the arguments before quoting them (interp/trace.go)"},
	{name: "opt/-x +x", args: []string{"-x", "+x", "-c", "echo a"}, sameStderr: true},
	{name: "opt/set -x +x", args: []string{"-c", "set -x; echo a; set +x; echo b"}, sameStderr: true},
	{name: "opt/no pipefail", args: []string{"-c", "false | true"}},
	{name: "opt/-o pipefail", args: []string{"-o", "pipefail", "-c", "(exit 3) | true"}, status: 3},
	{name: "opt/-o +o pipefail", args: []string{"-o", "pipefail", "+o", "pipefail", "-c", "false | true"}},
	{name: "opt/-eo pipefail", args: []string{"-eo", "pipefail", "-c", "false | true; echo b"}, status: 1},
	{name: "opt/+eo pipefail", args: []string{"-e", "-o", "pipefail", "+eo", "pipefail", "-c", "false | true; echo $?"}},
	{name: "opt/-euxo pipefail", args: []string{"-euxo", "pipefail", "-c", "echo a; (exit 2) | true; echo b"}, status: 2},

	// a bad command line
	{name: "usage/unknown option", args: []string{"-z", "-c", "echo a"}, status: 2},
	{name: "usage/unknown long option", args: []string{"--bogus"}, status: 2},
	{name: "usage/bad -o name", args: []string{"-o", "bogus", "-c", "echo a"}, status: 2},
	{name: "usage/-c without script", args: []string{"-c"}, status: 2},

	// exit statuses of commands
	{name: "exec/not found", args: []string{"-c", "nosuchcommand"}, status: 127},
	{name: "exec/no such path", args: []string{"-c", "./nosuchfile"}, status: 127},
	{name: "exec/directory", args: []string{"-c", "./adir"}, status: 126},
	{name: "exec/no x bit", args: []string{"-c", "./nox"}, status: 126},
	{name: "exec/EACCES", args: []string{"-c", "./dirinterp"}, status: 126},
	{name: "exec/SIGTERM", args: []string{"-c", "sh -c 'kill -TERM $$'"}, status: 143},
	{name: "exec/SIGKILL", args: []string{"-c", "sh -c 'kill -KILL $$'"}, status: 137},
	{name: "exec/goes on", args: []string{"-c", "./nosuchfile; echo $?; ./adir; echo $?; ./nox; echo $?; sh -c 'kill -INT $$'; echo $?"}},
	{name: "exec/set -e stops", args: []string{"-e", "-c", "nosuchcommand; echo b"}, status: 127},
	{name: "exec/ENOEXEC", args: []string{"-c", "./noshebang a b"}, status: 5},
	{name: "exec/ENOEXEC goes on", args: []string{"-c", "./noshebang; echo $?"}},
	{name: "exec/bad shebang", args: []string{"-c", "./badshebang; echo $?"}},
	{name: "exec/bad shebang last", args: []string{"-c", "./badshebang"}, status: 127},
	{name: "exec/binary", args: []string{"-c", "./fakebin; echo $?"}},
	{name: "exec/parse error", args: []string{"-c", "echo a; if then"}, status: 2},
}

// unboundStatus: bash exits 127 on an unbound variable under -u.
const unboundStatus = "mvdan.cc/sh exits 1 on an unbound variable under -u, bash 127 (interp/runner.go, expandErr)"

// statusFiles are the files the cases use; a mode of 0 is a directory.
var statusFiles = []struct {
	name, text string
	mode       os.FileMode
}{
	{"args.sh", "echo \"$0|$1|$2|$#\"\n", 0o644},
	{"status.sh", "true\nsh -c 'exit 4'\n", 0o644},
	{"parse.sh", "echo a\nif then\n", 0o644},
	{"adir", "", 0},
	{"nox", "echo nox\n", 0o644},
	{"dirinterp", "#!/tmp\necho a\n", 0o755},
	{"noshebang", "echo \"$0|$1|$#\"\nexit 5\n", 0o755},
	{"badshebang", "#!/nonexistent\necho a\n", 0o755},
	{"fakebin", "\x7fELF\x00\x01\x02\n", 0o755},
}

func TestStatusLikeBash(t *testing.T) {
	if _, err := os.Stat(bashPath); err != nil {
		t.Fatalf("bash is needed to compare wsh with: %v", err)
	}
	dir := statusDir(t)
	for _, tc := range statusCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := runShell(t, exec.Command(bashPath, tc.args...), dir, tc.stdin)
			got := runShell(t, wshCommand(t, tc.args...), dir, tc.stdin)
			if want.status != tc.status {
				t.Fatalf("bad case: bash exits %d, not %d; stderr:\n%s", want.status, tc.status, want.stderr)
			}
			if tc.knownDiff != "" {
				if got.status != tc.wshStatus {
					t.Errorf("wsh exits %d, not %d; the known difference from bash has changed: %s", got.status, tc.wshStatus, tc.knownDiff)
				}
				return
			}
			if got.status != want.status {
				t.Errorf("wsh exits %d, bash %d\nwsh stderr:\n%s\nbash stderr:\n%s", got.status, want.status, got.stderr, want.stderr)
			}
			if tc.stdoutDiffers == "" && got.stdout != want.stdout {
				t.Errorf("wsh stdout %q, bash %q", got.stdout, want.stdout)
			}
			if tc.sameStderr && got.stderr != want.stderr {
				t.Errorf("wsh stderr %q, bash %q", got.stderr, want.stderr)
			}
		})
	}
}

// statusDir makes a directory holding statusFiles.
func statusDir(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range statusFiles {
		p := filepath.Join(dir, f.name)
		var err error
		if f.mode == 0 {
			err = os.Mkdir(p, 0o755)
		} else if err = os.WriteFile(p, []byte(f.text), f.mode); err == nil {
			err = os.Chmod(p, f.mode) // whatever the umask
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	return dir
}

type result struct {
	status         int
	stdout, stderr string
}

// runShell runs cmd in dir with a small fixed environment.
func runShell(t *testing.T, cmd *exec.Cmd, dir, stdin string) result {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C"}
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", cmd.Args[0], err)
	}
	return result{statusOf(cmd.ProcessState), stdout.String(), stderr.String()}
}

// statusOf is the status a shell reports for a process: 128+N when a
// signal N killed it.
func statusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// TestKilledBySignal checks that wsh, sent SIGTERM while a jailed command
// runs, stops that command and exits 128+15: the status a shell reports
// for bash killed the same way.
func TestKilledBySignal(t *testing.T) {
	for _, sh := range []string{bashPath, "wsh"} {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			var cmd *exec.Cmd
			if sh == "wsh" {
				cmd = wshCommand(t, "-c", "echo ready; sleep 60")
			} else {
				cmd = exec.Command(sh, "-c", "echo ready; sleep 60; :")
			}
			start := time.Now()
			status := signalWhenReady(t, cmd, syscall.SIGTERM)
			if status != 128+int(syscall.SIGTERM) {
				t.Errorf("%s exits %d after SIGTERM, want %d", sh, status, 128+int(syscall.SIGTERM))
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("%s took %v to stop: its command was not stopped", sh, d)
			}
		})
	}
}

// signalWhenReady starts cmd, sends it sig once it has printed a line, and
// returns its status. What it leaves in its process group is killed.
func signalWhenReady(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) int {
	t.Helper()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ready := make(chan error, 1)
	go func() {
		_, err := bufio.NewReader(out).ReadString('\n')
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("reading the ready line: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("no ready line")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return statusOf(cmd.ProcessState)
}
