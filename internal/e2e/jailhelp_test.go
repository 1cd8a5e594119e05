//go:build linux && cgo

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// jailEnv makes wsh fail closed: a refused jail is exit 126, never a run
// without it, so a jail test fails (and does not pass unconfined) on a host
// that refuses the jail.
var jailEnv = []string{"WSH_REQUIRE_SANDBOX=1"}

// mustJail is mustRun with jailEnv added to env.
func mustJail(t *testing.T, u user, dir string, env []string, script string) string {
	t.Helper()
	return mustRun(t, u, dir, append(append([]string(nil), jailEnv...), env...), script)
}

// probeBin returns the path of testdata/probe.
func probeBin(t *testing.T) string {
	return helperBin(t, "probe", "./testdata/probe", "CGO_ENABLED=0")
}

var tokenSeq atomic.Int64

// uniqueNumber returns a number of about base (a sleep's seconds, or 0 for
// a name) whose text no other process on the host has in its command line:
// the test's pid and a counter are its decimals.
func uniqueNumber(base int) string {
	return fmt.Sprintf("%d.%d%04d", base, os.Getpid(), tokenSeq.Add(1))
}

// A hostProc is a process of the host, seen in the host's /proc.
type hostProc struct {
	pid  int
	args []string
}

// hostProcs returns the host's processes whose command line contains
// token. The jail init has the target's argv in its own (as JSON), so a
// token in the target's argv finds both. Zombies have no command line.
func hostProcs(token string) []hostProc {
	ents, _ := os.ReadDir("/proc")
	var out []hostProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), token) {
			continue
		}
		out = append(out, hostProc{pid, strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")})
	}
	return out
}

// noLeftovers fails the test if a host process has token in its command
// line, and kills every such process so that a failure leaves nothing.
func noLeftovers(t *testing.T, token string) {
	t.Helper()
	for _, p := range hostProcs(token) {
		t.Errorf("left behind: pid %d %q", p.pid, p.args)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// waitUntil polls cond every 10ms for up to d and reports whether it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// A started wsh runs in the background; its stdout and stderr go to one
// pipe that the test reads line by line.
type started struct {
	cmd   *exec.Cmd
	lines chan string   // every line of output, closed at EOF
	out   []string      // the lines read so far, by the test
	eof   chan struct{} // closed at EOF
}

// startWsh starts `wsh -c script` as u in dir.
func startWsh(t *testing.T, u user, dir string, env []string, script string) *started {
	t.Helper()
	return startCmd(t, wshCmd(context.Background(), u, dir, env, "-c", script))
}

// startCmd starts cmd (wsh, or the hostile harness that becomes wsh).
func startCmd(t *testing.T, cmd *exec.Cmd) *started {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		t.Fatal(err)
	}
	s := &started{cmd: cmd, lines: make(chan string, 1024), eof: make(chan struct{})}
	go s.read(pr)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return s
}

func (s *started) read(pr *os.File) {
	defer pr.Close()
	defer close(s.eof)
	defer close(s.lines)
	var buf []byte
	b := make([]byte, 4096)
	for {
		n, err := pr.Read(b)
		buf = append(buf, b[:n]...)
		for {
			i := strings.IndexByte(string(buf), '\n')
			if i < 0 {
				break
			}
			s.lines <- string(buf[:i])
			buf = buf[i+1:]
		}
		if err != nil {
			return
		}
	}
}

// waitLine waits up to 10s for a line of output equal to want.
func (s *started) waitLine(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("wsh ended its output without %q; output:\n%s", want, strings.Join(s.out, "\n"))
			}
			s.out = append(s.out, l)
			if l == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %q from wsh in 10s; output:\n%s", want, strings.Join(s.out, "\n"))
		}
	}
}

// wait waits up to d for wsh to exit and returns its status as a shell
// reports it (128+N when signal N killed it) and all its output. The output is what was written
// until EOF, or until 2s after the exit when something still holds the
// pipe.
func (s *started) wait(t *testing.T, d time.Duration) (int, string) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		s.cmd.Process.Kill()
		<-done
		t.Errorf("wsh did not exit within %v", d)
	}
	select {
	case <-s.eof:
		for l := range s.lines {
			s.out = append(s.out, l)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("the output of wsh is still open 2s after it exited")
		s.drain()
	}
	status := s.cmd.ProcessState.ExitCode()
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		status = 128 + int(ws.Signal())
	}
	return status, strings.Join(s.out, "\n")
}

// drain takes the lines read so far without waiting for more.
func (s *started) drain() {
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return
			}
			s.out = append(s.out, l)
		default:
			return
		}
	}
}
