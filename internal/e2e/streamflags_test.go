//go:build linux && cgo

package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStreamFlagsPutBack: a jailed command that sets O_NONBLOCK on the
// terminal it was given (node does, on its standard streams) changes the
// open file description the user's shell reads the terminal through: left
// so, the next program to read it gets EAGAIN. wsh puts the file status
// flags of the streams it was given back after each foreground command
// and when it ends, however it ends. The flags are read back on the
// test's own descriptor of the terminal, which shares that description.
func TestStreamFlagsPutBack(t *testing.T) {
	p := probeBin(t)
	cases := []struct {
		name, script string
		// during, if set, acts once the script wrote "ready", and says
		// whether wsh is then to end of a signal.
		during func(t *testing.T, r *ptyRun) bool
	}{
		{"at exit", p + " nonblock 0 > set", nil},
		{"between two commands", p + ` nonblock 0 > set; echo ready; read -r x; echo "read:$x"`,
			func(t *testing.T, r *ptyRun) bool {
				if nonblock(t, r.pts) {
					t.Errorf("O_NONBLOCK is still set when the next command of the script runs")
				}
				r.ptmx.WriteString("typed\n")
				r.waitFor("read:typed") // the script's read got the line, not EAGAIN
				return false
			}},
		// A job still running as the script ends sets it last.
		{"by a background job", `mkfifo f; sh -c '` + p + ` nonblock 2 > set; echo > f; while :; do ` + p + ` nonblock 2 >/dev/null; done' & read -r x < f`, nil},
		{"SIGTERM to wsh", `sh -c '` + p + ` nonblock 0 > set; echo ready; exec sleep 600'`, signalling(syscall.SIGTERM)},
		{"SIGINT to wsh", `sh -c '` + p + ` nonblock 0 > set; echo ready; exec sleep 600'`, signalling(syscall.SIGINT)},
	}
	for _, u := range users {
		for _, c := range cases {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				dir := workDir(t, u)
				r := startOnPty(t, u, dir, c.script)
				signalled := false
				if c.during != nil {
					r.waitFor("ready")
					signalled = c.during(t, r)
				}
				<-r.exited
				r.drain()
				err := r.err
				if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || signalled != ws.Signaled() || !signalled && ws.ExitStatus() != 0 {
					t.Fatalf("wsh: %v\n%s", err, r.seen.String())
				}
				if b, _ := os.ReadFile(dir + "/jailed"); string(b) != "Seccomp:\t2\n" {
					t.Fatalf("not jailed: %q\n%s", b, r.seen.String())
				}
				if b, _ := os.ReadFile(dir + "/set"); string(b) != "nonblock\n" {
					t.Fatalf("the command did not set O_NONBLOCK on the terminal: %q\n%s", b, r.seen.String())
				}
				if nonblock(t, r.pts) {
					t.Errorf("O_NONBLOCK is still set on the terminal after wsh ended")
				}
			})
		}
	}
}

// TestStreamFlagsPutBackPipes: the same for pipes wsh is given, whose
// other end its parent holds (make reading a command's output): a pipe
// left non-blocking fails the parent's reads with EAGAIN.
func TestStreamFlagsPutBackPipes(t *testing.T) {
	p := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer inR.Close()
			defer inW.Close()
			outR, outW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer outR.Close()
			defer outW.Close()
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			cmd := wshCmd(ctx, u, dir, jailEnv, "-c", "grep Seccomp: /proc/self/status > jailed; "+p+" nonblock 0 > in; "+p+" nonblock 2 > out")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
			err = cmd.Run()
			stdoutBlocking := !nonblock(t, outW)
			outW.Close()
			said, _ := io.ReadAll(outR)
			if err != nil {
				t.Fatalf("wsh: %v\n%s", err, said)
			}
			if b, _ := os.ReadFile(dir + "/jailed"); string(b) != "Seccomp:\t2\n" {
				t.Fatalf("not jailed: %q", b)
			}
			for _, f := range []string{"in", "out"} {
				if b, _ := os.ReadFile(dir + "/" + f); string(b) != "nonblock\n" {
					t.Fatalf("the command did not set O_NONBLOCK on the pipe (%s): %q", f, b)
				}
			}
			if nonblock(t, inR) {
				t.Errorf("O_NONBLOCK is still set on wsh's stdin, the read end of its parent's pipe")
			}
			if !stdoutBlocking {
				t.Errorf("O_NONBLOCK is still set on wsh's stdout and stderr, the write end of its parent's pipe")
			}
		})
	}
}

// A ptyRun is wsh -c script running with a fresh pty as its controlling
// terminal and its three streams, as in a terminal window.
type ptyRun struct {
	t         *testing.T
	ptmx, pts *os.File
	cmd       *exec.Cmd
	out       chan string // what wsh wrote to the terminal
	seen      strings.Builder
	exited    chan struct{} // closed when wsh has exited, with err
	err       error
	drained   bool
}

// startOnPty starts wsh -c script as u in dir on a fresh pty, with the
// jail required.
func startOnPty(t *testing.T, u user, dir, script string) *ptyRun {
	t.Helper()
	r := &ptyRun{t: t, out: make(chan string, 1024), exited: make(chan struct{})}
	r.ptmx, r.pts = newPty(t)
	t.Cleanup(func() { r.ptmx.Close(); r.pts.Close() })
	if nonblock(t, r.pts) {
		t.Fatal("a fresh pty is non-blocking")
	}
	go func() {
		defer close(r.out)
		buf := make([]byte, 4096)
		for {
			n, err := r.ptmx.Read(buf)
			if n > 0 {
				r.out <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	r.cmd = wshCmd(ctx, u, dir, jailEnv, "-c", "grep Seccomp: /proc/self/status > jailed; "+script)
	r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr = r.pts, r.pts, r.pts
	if r.cmd.SysProcAttr == nil {
		r.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	r.cmd.SysProcAttr.Setsid, r.cmd.SysProcAttr.Setctty, r.cmd.SysProcAttr.Ctty = true, true, 0
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.exited)
	}()
	return r
}

// waitFor reads what wsh writes to the terminal until want was written.
func (r *ptyRun) waitFor(want string) {
	r.t.Helper()
	for !strings.Contains(r.seen.String(), want) {
		select {
		case s := <-r.out:
			r.seen.WriteString(s)
		case <-r.exited:
			r.drain()
			if !strings.Contains(r.seen.String(), want) {
				r.t.Fatalf("wsh ended (%v) before %q was written:\n%s", r.err, want, r.seen.String())
			}
		}
	}
}

// drain takes what is left to read of what wsh wrote, once it ended:
// up to a mark the test writes to the terminal after it.
func (r *ptyRun) drain() {
	const mark = "[wsh ended]"
	if r.drained {
		return
	}
	r.drained = true
	if _, err := r.pts.WriteString(mark); err != nil {
		r.t.Fatal(err)
	}
	for !strings.HasSuffix(r.seen.String(), mark) {
		s, ok := <-r.out
		if !ok {
			r.t.Fatalf("the terminal closed:\n%s", r.seen.String())
		}
		r.seen.WriteString(s)
	}
}

// signalling sends sig to wsh alone, as kill does.
func signalling(sig syscall.Signal) func(*testing.T, *ptyRun) bool {
	return func(t *testing.T, r *ptyRun) bool {
		if err := r.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		return true
	}
}

// nonblock says whether f's open file description has O_NONBLOCK, as
// F_GETFL reads it.
func nonblock(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	if cerr := rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); cerr != nil || err != nil {
		t.Fatal(cerr, err)
	}
	return fl&unix.O_NONBLOCK != 0
}
