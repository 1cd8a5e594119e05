//go:build linux && cgo

package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTerminalPutBack: a jailed command may change its terminal's
// settings while it runs (a later command of the script sees them), but
// the user gets the terminal back as it was when wsh ends, not one where
// no key reaches the shell.
func TestTerminalPutBack(t *testing.T) {
	cases := []struct{ name, script string }{
		// The second stty runs after the first changed the settings, and
		// reads them back from the kernel.
		{"changed by a command", "stty -echo -icanon stop ^M start undef; stty -a > settings"},
		// /dev/tty is the same terminal by another device number.
		{"then given as /dev/tty", "stty -echo -icanon; stty -a > settings; /bin/true </dev/tty"},
		// A job still running when the script ends changes them last.
		{"by a background job", `stty -a > settings; sh -c 'while :; do stty -echo -icanon; done' & /bin/sleep 0.3`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, after, dir := onATerminal(t, c.script+"; grep Seccomp: /proc/self/status > jailed")
			if b, _ := os.ReadFile(dir + "/jailed"); string(b) != "Seccomp:\t2\n" {
				t.Fatalf("not jailed: %q", b)
			}
			if c.name == "changed by a command" {
				during, _ := os.ReadFile(dir + "/settings")
				if !containsWord(string(during), "-echo") || !containsWord(string(during), "-icanon") {
					t.Errorf("the command's settings did not hold for the next command:\n%s", during)
				}
			}
			if after != before {
				t.Errorf("the terminal was left changed after wsh ended: lflag %#x, was %#x; VSTOP %d, was %d",
					after.Lflag, before.Lflag, after.Cc[unix.VSTOP], before.Cc[unix.VSTOP])
			}
		})
	}
}

// newPty opens a fresh pty: its master, and its terminal, named by its
// /dev/pts path.
func newPty(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	// TIOCGPTPEER's argument is the terminal's open flags: read and
	// write, as a terminal window's.
	fd, _, errno := unix.Syscall(unix.SYS_IOCTL, ptmx.Fd(), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		t.Fatal(errno)
	}
	return ptmx, os.NewFile(uintptr(fd), fmt.Sprintf("/dev/pts/%d", n))
}

// onATerminal runs wsh -c script as the unprivileged user with a fresh
// pty as its controlling terminal and standard streams, and returns the
// pty's settings before and after, and the directory it ran in.
func onATerminal(t *testing.T, script string) (before, after unix.Termios, dir string) {
	t.Helper()
	ptmx, pts := newPty(t)
	defer ptmx.Close()
	defer pts.Close()
	fd := int(pts.Fd())
	b, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if b.Lflag&unix.ECHO == 0 || b.Lflag&unix.ICANON == 0 {
		t.Fatalf("a fresh pty without echo or canonical mode: %#x", b.Lflag)
	}
	go io.Copy(io.Discard, ptmx)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dir = workDir(t, unprivileged)
	cmd := wshCmd(ctx, unprivileged, dir, nil, "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	if err := cmd.Run(); err != nil {
		t.Fatalf("wsh: %v", err)
	}
	a, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *b, *a, dir
}

func containsWord(s, w string) bool {
	return slices.Contains(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == ';' }), w)
}
