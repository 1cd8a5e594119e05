//go:build linux && cgo

package streams

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGivenStreamsRestore: the status flags a command changed on a
// stream's open file description are put back as they were noted, at
// the cost of an fcntl and no allocation; a stream its caller closed is
// left alone.
func TestGivenStreamsRestore(t *testing.T) {
	// A blocking pipe, as a parent gives one (os.Pipe's are not).
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(p[0]), "r"), os.NewFile(uintptr(p[1]), "w")
	defer r.Close()
	defer w.Close()
	setFlags(t, w, unix.O_APPEND) // as given
	var gs Given
	gs.Note(r, w, w, nil, (*os.File)(nil))
	if len(gs.s) != 2 {
		t.Fatalf("%d streams noted, want 2 (a file once, nil ones not)", len(gs.s))
	}
	setFlags(t, r, unix.O_NONBLOCK) // as node does
	setFlags(t, w, unix.O_NONBLOCK|unix.O_ASYNC)
	clearFlags(t, w, unix.O_APPEND)
	gs.Restore()
	if fl := flags(t, r); fl&unix.O_NONBLOCK != 0 {
		t.Errorf("O_NONBLOCK left on the read end: %#x", fl)
	}
	if fl := flags(t, w); fl&statusFlags != unix.O_APPEND {
		t.Errorf("the write end's flags not put back: %#x, want O_APPEND alone", fl)
	}
	if n := testing.AllocsPerRun(100, gs.Restore); n != 0 {
		t.Errorf("a restore allocates %v times", n)
	}
	r.Close()
	gs.Restore() // no descriptor of r's: nothing is done, nothing fails
}

func flags(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func setFlags(t *testing.T, f *os.File, add int) {
	t.Helper()
	changeFlags(t, f, flags(t, f)|add)
	if flags(t, f)&add != add {
		t.Fatalf("%#x not set", add)
	}
}

func clearFlags(t *testing.T, f *os.File, clear int) {
	t.Helper()
	changeFlags(t, f, flags(t, f)&^clear)
	if flags(t, f)&clear != 0 {
		t.Fatalf("%#x not cleared", clear)
	}
}

func changeFlags(t *testing.T, f *os.File, fl int) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { _, err = unix.FcntlInt(fd, unix.F_SETFL, fl) })
	if err != nil {
		t.Fatal(err)
	}
}
