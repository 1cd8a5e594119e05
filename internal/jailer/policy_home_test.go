//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"wsh/internal/launch"
)

// TestHomeViewLost: when the keeper gives the shell's view no clone, the
// view turns off, says why once, and the operation is done on the host's
// home, read-only, as the jails see it from then on; it is not an error
// of its own, naming the keeper, in place of the file's.
func TestHomeViewLost(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	mustDo(t, err)
	mustDo(t, os.WriteFile(filepath.Join(home, "f"), []byte("host"), 0o644))
	p, err := newPolicy([]string{t.TempDir()}, nil)
	mustDo(t, err)
	gone := errors.New("the keeper of the jail's home is gone")
	p.home = newHomeView(home, func() (launch.Clone, error) { return launch.Clone{}, gone }, nil)
	var said []error
	p.home.lost = func(err error) { said = append(said, err) }
	ctx := context.Background()

	f, err := p.open(ctx, filepath.Join(home, "f"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatalf("reading a file of the home once the keeper is gone: %v, want the host's file", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "host" {
		t.Errorf("read %q, want the host's %q", b, "host")
	}
	if len(said) != 1 || !errors.Is(said[0], gone) {
		t.Errorf("lost was told %v, want %q once", said, gone)
	}
	if _, err := p.open(ctx, filepath.Join(home, "new"), os.O_WRONLY|os.O_CREATE, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing to the home once the keeper is gone: %v, want EROFS, as in the jail", err)
	}
	if _, err := p.stat(ctx, filepath.Join(home, "f"), true); err != nil {
		t.Errorf("stat: %v", err)
	}
	if len(said) != 1 {
		t.Errorf("lost was told %d times, want once", len(said))
	}
	if _, err := os.Lstat(filepath.Join(home, "new")); err == nil {
		t.Error("the write reached the host's home")
	}
}

// TestHomeViewLostFirstWrite: the first operation after the keeper is gone
// may be a write; it too is refused as the jail refuses it.
func TestHomeViewLostFirstWrite(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	mustDo(t, err)
	p, err := newPolicy([]string{t.TempDir()}, nil)
	mustDo(t, err)
	p.home = newHomeView(home, func() (launch.Clone, error) { return launch.Clone{}, errors.New("gone") }, nil)
	if _, err := p.open(context.Background(), filepath.Join(home, "new"), os.O_WRONLY|os.O_CREATE, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing to the home once the keeper is gone: %v, want EROFS", err)
	}
}

// TestHomeViewMaxHold: a view used without pause (a loop of the shell's
// own tests) lets its clone go once it is older than viewMaxHold, so
// that the keeper can mount the home anew; a view used now and then keeps
// one clone for as long as it is used.
func TestHomeViewMaxHold(t *testing.T) {
	dir := t.TempDir()
	clones := 0
	src := func() (launch.Clone, error) {
		m, err := os.Open(dir)
		if err != nil {
			return launch.Clone{}, err
		}
		l, err := os.Open(dir)
		if err != nil {
			m.Close()
			return launch.Clone{}, err
		}
		clones++
		return launch.Clone{Mount: m, Lock: l}, nil
	}
	defer func(d time.Duration) { viewMaxHold = d }(viewMaxHold)
	viewMaxHold = 50 * time.Millisecond
	v := newHomeView(dir, src, nil)
	defer v.close()
	for start := time.Now(); time.Since(start) < 4*viewMaxHold; {
		if _, err := v.acquire(); err != nil {
			t.Fatal(err)
		}
		v.release(nil)
		time.Sleep(viewIdle / 4)
	}
	if clones < 2 {
		t.Errorf("%d clones over %v of use without pause, want a new one after %v", clones, 4*viewMaxHold, viewMaxHold)
	}
	// A file opened on the clone keeps it, however old.
	g, err := v.acquire()
	if err != nil {
		t.Fatal(err)
	}
	f, err := g.open(".", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.release(f)
	n := clones
	time.Sleep(2 * viewMaxHold)
	for i := 0; i < 5; i++ {
		if _, err := v.acquire(); err != nil {
			t.Fatal(err)
		}
		v.release(nil)
	}
	if clones != n {
		t.Errorf("the view let go of a clone that an open file uses")
	}
	f.Close()
}
