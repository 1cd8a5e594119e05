//go:build linux && cgo

package launch

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"wsh/degrade"
	"wsh/internal/proto"
	"wsh/internal/seccomp"
)

// startSession starts a session whose jail's working directory is a fresh
// writable temporary directory, and ends it with the test.
func startSession(t *testing.T) (*Session, string) {
	t.Helper()
	req, stderr := jailRequest(t, "true")
	asSession(t, req)
	s, f := StartSession(context.Background(), req)
	if s == nil {
		t.Fatalf("the session's jail was not made: %+v (report %+v)\n%s", f, f.Report, stderr)
	}
	t.Cleanup(func() { s.Close() })
	return s, req.Spec.Dir
}

// asSession makes req a session's, with the full rung's session's two
// programs (seccomp.CompileSplit), as wsh sends them.
func asSession(t testing.TB, req *Request) {
	t.Helper()
	threads, fork, err := seccomp.CompileSplit((&proto.Spec{Rung: degrade.RungFull, Session: true}).SkipGroups()...)
	if err != nil {
		t.Fatal(err)
	}
	req.Spec.Session, req.Spec.Path, req.Spec.Args = true, "", nil
	req.Spec.Filter, req.Spec.ForkFilter = threads, fork
}

// sh runs script with sh -c in the session and returns its status and
// what it printed.
func sh(t *testing.T, s *Session, dir, script string) (int, string) {
	t.Helper()
	path, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := s.Run(ctx, &Command{Path: path, Args: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Umask: 0o022, Stdout: &out, Stderr: &out})
	if f.StartErr != nil || f.Report != nil {
		t.Fatalf("%q in the session: %+v (report %+v)\n%s", script, f, f.Report, out.String())
	}
	return f.Status, out.String()
}

// TestSessionCommandsShareTheJail: commands of one session are forked in
// one jail: a second command sees a first that still runs (one PID
// namespace) and its files, but not what a command that has exited left
// behind (killed as it exited); each has the confinement read back from
// the kernel (no capabilities, no_new_privs, the filter), a session and
// process group of its own, its umask and its status; none sees the
// session's channel.
func TestSessionCommandsShareTheJail(t *testing.T) {
	s, dir := startSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan degrade.Facts, 1)
	go func() {
		path, _ := exec.LookPath("sh")
		running <- s.Run(ctx, &Command{Path: path, Args: []string{"sh", "-c", "echo $$ > bg; exec sleep 300"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir})
	}()
	defer func() { cancel(); <-running }()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(dir + "/bg"); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the first command did not start")
		}
	}
	if st, out := sh(t, s, dir, "sleep 300 & echo $! > orphan; echo started"); st != 0 || out != "started\n" {
		t.Fatalf("a command that leaves a process behind: %d %q", st, out)
	}
	st, out := sh(t, s, dir, `kill -0 $(cat bg) && echo bg-alive
kill -0 $(cat orphan) 2>/dev/null || echo orphan-gone
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status
echo sid=$(cut -d' ' -f6 /proc/self/stat) pgrp=$(cut -d' ' -f5 /proc/self/stat) pid=$$
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status
echo pgrp=$(cut -d' ' -f5 /proc/self/stat) pid=$$
umask
ls /proc/self/fd | tr '\n' ' '; echo
readlink /proc/1/fd/8 || echo channel-refused
exit 7`)
	if st != 7 {
		t.Errorf("status %d, want 7\n%s", st, out)
	}
	if strings.Contains(out, "socket:[") {
		t.Errorf("a command read the session's channel in PID 1's descriptors:\n%s", out)
	}
	for _, w := range []string{"bg-alive\n", "orphan-gone\n", "CapEff:\t0000000000000000\n", "CapBnd:\t0000000000000000\n", "NoNewPrivs:\t1\n", "Seccomp:\t2\n", "0022\n", "0 1 2 3 \n", "channel-refused\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("second command: no %q in\n%s", w, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "sid=") {
			f := strings.Fields(l)
			pid := strings.TrimPrefix(f[2], "pid=")
			if strings.TrimPrefix(f[0], "sid=") == pid || strings.TrimPrefix(f[1], "pgrp=") != pid {
				t.Errorf("the command does not lead a process group of its own, or leads a session (it would take a terminal it opens as its controlling one): %s", l)
			}
		}
	}
}

// TestSessionCancel: a cancelled command's process group gets SIGTERM;
// one that ignores it gets SIGKILL after the kill timeout.
func TestSessionCancel(t *testing.T) {
	s, dir := startSession(t)
	for _, c := range []struct {
		script string
		want   int
	}{{"sleep 300", proto.SignalStatus(syscall.SIGTERM)}, {"trap '' TERM; sleep 300", proto.SignalStatus(syscall.SIGKILL)}} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		f := s.Run(ctx, &Command{Path: "/bin/sh", Args: []string{"sh", "-c", c.script}, Dir: dir, KillTimeout: 300 * time.Millisecond})
		cancel()
		if f.Status != c.want {
			t.Errorf("%q cancelled: status %d, want %d", c.script, f.Status, c.want)
		}
	}
}

// TestSessionFailedExec: a command whose exec fails never ran, and says
// why; the session goes on.
func TestSessionFailedExec(t *testing.T) {
	s, dir := startSession(t)
	f := s.Run(context.Background(), &Command{Path: "/nonexistent", Args: []string{"x"}, Dir: dir})
	if f.Report == nil || f.Report.Step != degrade.StepExec || f.Report.Errno != syscall.ENOENT {
		t.Errorf("exec of a missing file: %+v (report %+v)", f, f.Report)
	}
	if st, out := sh(t, s, dir, "echo ok"); st != 0 || out != "ok\n" {
		t.Errorf("after the failure: %d %q", st, out)
	}
}

// TestSessionClose: Close ends every process of the session, those it
// left running in the background too.
func TestSessionClose(t *testing.T) {
	s, dir := startSession(t)
	sh(t, s, dir, "setsid sleep 300 & sleep 300 & echo $! > bg")
	pid := s.p.Pid
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("the session's init is still there after Close: %v", err)
	}
	out, _ := exec.Command("pgrep", "-f", "^sleep 300$").Output()
	for _, p := range strings.Fields(string(out)) {
		if b, err := os.ReadFile("/proc/" + p + "/environ"); err == nil && bytes.Contains(b, []byte("PATH=/usr/bin:/bin")) && len(b) < 40 {
			t.Errorf("a process of the session is left: %s", p)
		}
	}
	if f := s.Run(context.Background(), &Command{Path: "/bin/true", Args: []string{"true"}, Dir: dir}); f.StartErr != ErrSessionEnded {
		t.Errorf("a command after Close: %+v, want ErrSessionEnded", f)
	}
}

// BenchmarkSessionExec is one /bin/true forked in a session's jail against
// one bare fork and exec of it, paired: each iteration runs both, in
// alternating order (A-ns/op the session's, B-ns/op the bare one's).
func BenchmarkSessionExec(b *testing.B) {
	req, _ := jailRequest(b, "true")
	asSession(b, req)
	s, f := StartSession(context.Background(), req)
	if s == nil {
		b.Fatalf("no session: %+v", f)
	}
	defer s.Close()
	c := &Command{Path: "/bin/true", Args: []string{"true"}, Dir: req.Spec.Dir}
	var ta, tb time.Duration
	session := func() {
		start := time.Now()
		if f := s.Run(context.Background(), c); f.Status != 0 || f.Report != nil || f.StartErr != nil {
			b.Fatalf("%+v", f)
		}
		ta += time.Since(start)
	}
	bare := func() {
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		tb += time.Since(start)
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			session()
			bare()
		} else {
			bare()
			session()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(ta.Nanoseconds())/n, "A-ns/op")
	b.ReportMetric(float64(tb.Nanoseconds())/n, "B-ns/op")
	b.ReportMetric(float64(ta)/float64(tb), "A/B")
}

// TestSessionOutlivesTheStartingThread: the init asks for SIGKILL when its
// parent dies, and its parent is a thread. Sessions started from
// goroutines locked to their threads, which then end (Go ends the thread
// of a locked goroutine that returns, unless it is the main thread), go
// on: StartSession clones the init from a thread of its own, kept for the
// session's life. Four of them, so that at least one thread ends.
func TestSessionOutlivesTheStartingThread(t *testing.T) {
	var sessions []*Session
	var dirs []string
	for range 4 {
		req, stderr := jailRequest(t, "true")
		asSession(t, req)
		got := make(chan *Session, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			s, f := StartSession(context.Background(), req)
			if s == nil {
				t.Errorf("the session's jail was not made: %+v (report %+v)\n%s", f, f.Report, stderr)
			}
			got <- s
		}()
		s := <-got
		if s == nil {
			t.FailNow()
		}
		t.Cleanup(func() { s.Close() })
		sessions, dirs = append(sessions, s), append(dirs, req.Spec.Dir)
	}
	time.Sleep(200 * time.Millisecond) // the threads are gone by then
	for i, s := range sessions {
		if st, out := sh(t, s, dirs[i], "echo alive"); st != 0 || out != "alive\n" {
			t.Errorf("session %d, after the thread that started it ended: %d %q", i, st, out)
		}
	}
}

// TestSessionStuckInit: an init that does not answer (stopped here from
// the host; a command can stall it in a fork) neither holds a cancelled
// command's Run for ever nor its Close: Run returns after the kill
// timeout and a grace, and Close kills the init (SIGKILL ends its PID
// namespace) after closeTimeout.
func TestSessionStuckInit(t *testing.T) {
	s, dir := startSession(t)
	path, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan degrade.Facts, 1)
	go func() {
		done <- s.Run(ctx, &Command{Path: path, Args: []string{"sleep", "300"}, Env: []string{}, Dir: dir, KillTimeout: 200 * time.Millisecond})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case f := <-done:
		if f.StartErr == nil {
			t.Errorf("a Run the init never answered: %+v", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled Run on a stuck init did not return within 5 s")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(closeTimeout + 5*time.Second):
		t.Fatal("Close of a stuck init did not return")
	}
	if err := s.p.Signal(syscall.Signal(0)); err == nil {
		t.Error("the stuck init still runs after Close")
	}
}
