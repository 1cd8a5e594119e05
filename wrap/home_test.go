//go:build linux

package wrap

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wsh/jail"
)

// testPlan is a home and a state directory inside it, in a fresh
// directory of the host's disk (the plan's socket is this uid's, so each
// test's home has its own).
func testPlan(t *testing.T) HomePlan {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, ".local", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "host-file"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := HomePlan{Home: home, State: filepath.Join(home, ".local", "state", "wsh")}
	t.Cleanup(func() { ResetHome(p) })
	return p
}

// TestHomeClone: the keeper's clone is a detached overlay mount of the
// home: it shows the host's file, and what is written through it lands in
// the upper directory, not in the home.
func TestHomeClone(t *testing.T) {
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	m, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(m.Fd()), &sfs); err != nil || sfs.Type != unix.OVERLAYFS_SUPER_MAGIC {
		t.Fatalf("the clone's file system is %#x (%v), want overlayfs", sfs.Type, err)
	}
	root := "/proc/self/fd/" + itoa(int(m.Fd()))
	if b, err := os.ReadFile(root + "/host-file"); err != nil || string(b) != "host\n" {
		t.Errorf("the host's file through the clone: %q, %v", b, err)
	}
	if err := os.WriteFile(root+"/written", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.Home, "written")); err == nil {
		t.Errorf("a file written through the clone is in the host's home")
	}
	if _, err := os.Stat(filepath.Join(p.Upper(), "written")); err != nil {
		t.Errorf("a file written through the clone is not in the upper directory: %v", err)
	}
	// A second clone is a mount of the same overlay: it sees the write.
	m2, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, err := os.Stat("/proc/self/fd/" + itoa(int(m2.Fd())) + "/written"); err != nil {
		t.Errorf("a second clone does not see the first one's write: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// cloneDev is the device of a clone of h's overlay: the overlay's own, the
// same for every mount of it.
func cloneDev(t *testing.T, h *Home) uint64 {
	t.Helper()
	m, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(m.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Dev
}

// TestHomeResetRefusedInUse: wsh home reset refuses while a wsh is
// connected, and works once it is gone (the keeper then ends at once).
func TestHomeResetRefusedInUse(t *testing.T) {
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/proc/self/fd/"+itoa(int(m.Fd()))+"/kept", []byte("x"), 0o644)
	m.Close()
	if _, err := ResetHome(p); !errors.Is(err, ErrHomeInUse) {
		t.Errorf("ResetHome while connected: %v, want ErrHomeInUse", err)
	}
	h.Release()
	freed, err := ResetHome(p)
	if err != nil {
		t.Fatalf("ResetHome once released: %v", err)
	}
	if freed == 0 {
		t.Errorf("ResetHome freed 0 bytes of a home that held a file")
	}
	if ents, err := os.ReadDir(p.Upper()); err != nil || len(ents) != 0 {
		t.Errorf("the upper directory after the reset: %v, %v", ents, err)
	}
	if InspectHome(p).Keeper {
		t.Errorf("the keeper still runs after the reset")
	}
}

// TestHomeNoSecondMount: while something holds the users lock (a jail
// init of an earlier keeper's mount, say) and that keeper is gone, no new
// keeper mounts the upper directory: OpenHome fails with ErrHomeInUse.
func TestHomeNoSecondMount(t *testing.T) {
	p := testPlan(t)
	if err := p.prepare(); err != nil {
		t.Fatal(err)
	}
	l, err := openLock(p.Dir(), jail.UsersLockName)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := flock(l, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if h, err := OpenHome(p); !errors.Is(err, ErrHomeInUse) {
		if err == nil {
			h.Release()
		}
		t.Fatalf("OpenHome with the users lock held and no keeper: %v, want ErrHomeInUse", err)
	}
	l.Close()
	h, err := OpenHome(p)
	if err != nil {
		t.Fatalf("OpenHome once the lock is free: %v", err)
	}
	h.Release()
}

// TestHomeKeeperLingers: the keeper stays for KeeperLinger after the last
// wsh went, and a wsh that comes meanwhile gets the same overlay (the same
// device), not a second mount of the upper directory.
func TestHomeKeeperLingers(t *testing.T) {
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	dev := cloneDev(t, h)
	h.Release()
	if !InspectHome(p).Keeper {
		t.Fatalf("the keeper ended as soon as the last wsh went")
	}
	h, err = OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if d := cloneDev(t, h); d != dev {
		t.Errorf("a wsh that came while the keeper lingered got overlay device %d, the first got %d", d, dev)
	}
}

// TestHomeCloneInterrupted: a signal that interrupts the wait for the
// keeper's answer (the socket has a receive timeout, so the call is not
// restarted) is not the keeper gone. Go's runtime sends itself such
// signals (SIGURG, to preempt); here every thread of the process gets them
// while a fake keeper takes its time.
func TestHomeCloneInterrupted(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	tv := unix.Timeval{Sec: 10}
	unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	h := &Home{conn: fds[0]}
	defer unix.Close(fds[0])
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	go func() { // the fake keeper: one slow answer a request
		var b [1]byte
		for {
			if n, _ := unix.Read(fds[1], b[:]); n != 1 {
				return
			}
			time.Sleep(200 * time.Millisecond)
			unix.SendmsgN(fds[1], []byte{jail.KeeperMount}, unix.UnixRights(int(null.Fd())), nil, 0)
		}
	}()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			ents, _ := os.ReadDir("/proc/self/task")
			for _, e := range ents {
				tid, _ := strconv.Atoi(e.Name())
				unix.Tgkill(os.Getpid(), tid, unix.SIGURG)
			}
		}
	}()
	for range 3 {
		m, err := h.Clone()
		if err != nil {
			t.Fatalf("Clone, interrupted by signals: %v", err)
		}
		m.Close()
	}
}
