//go:build linux && cgo

package launch

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
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
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := c.Mount
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
	c2, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := os.Stat("/proc/self/fd/" + itoa(int(c2.Mount.Fd())) + "/written"); err != nil {
		t.Errorf("a second clone does not see the first one's write: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// cloneDev is the device of a clone of h's overlay: the overlay's own, the
// same for every mount of it.
func cloneDev(t *testing.T, h *Home) uint64 {
	t.Helper()
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return devOf(t, c)
}

func devOf(t *testing.T, c Clone) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(c.Mount.Fd()), &st); err != nil {
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
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/proc/self/fd/"+itoa(int(c.Mount.Fd()))+"/kept", []byte("x"), 0o644)
	c.Close()
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

// TestHomeNoSecondMount: while a lock of an earlier keeper's mount is
// held (by a jail init of a keeper that was killed, say), no new keeper
// mounts the upper directory: OpenHome fails with ErrHomeInUse.
func TestHomeNoSecondMount(t *testing.T) {
	p := testPlan(t)
	if err := p.prepare(); err != nil {
		t.Fatal(err)
	}
	l, err := openLock(filepath.Join(p.Dir(), proto.GensDir), "0123456789abcdef.lock")
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
		t.Fatalf("OpenHome with an earlier mount's lock held and no keeper: %v, want ErrHomeInUse", err)
	}
	l.Close()
	h, err := OpenHome(p)
	if err != nil {
		t.Fatalf("OpenHome once the lock is free: %v", err)
	}
	h.Release()
}

// TestHomeRefresh: while a clone is in use, every clone is of the same
// mount (one superblock: the same device), which goes on showing what it
// looked up before the host changed the home (a file the host made since
// stays missing). Once none is in use and the mount is older than
// KeeperRefresh, the next clone is of a new mount, which shows the host's
// home as it is now.
func TestHomeRefresh(t *testing.T) {
	defer func(d time.Duration) { KeeperRefresh = d }(KeeperRefresh)
	KeeperRefresh = 50 * time.Millisecond
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	a, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	root := func(c Clone) string { return "/proc/self/fd/" + itoa(int(c.Mount.Fd())) }
	if _, err := os.Stat(root(a) + "/late"); err == nil {
		t.Fatal("a file that is not there yet")
	}
	if err := os.WriteFile(filepath.Join(p.Home, "late"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * KeeperRefresh)
	b, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if devOf(t, b) != devOf(t, a) {
		t.Errorf("a clone made while another is in use is of another mount")
	}
	if _, err := os.Stat(root(b) + "/late"); err == nil {
		t.Logf("this kernel's overlay showed the host's new file at once")
	}
	a.Close()
	b.Close()
	time.Sleep(2 * KeeperRefresh)
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(root(c) + "/late"); err != nil {
		t.Errorf("the mount after the refresh does not show the file the host made: %v", err)
	}
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
	lock, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	nullFD, lockFD := int(null.Fd()), int(lock.Fd())
	keeper := make(chan struct{})
	go func() { // the fake keeper: one slow answer a request, three times
		defer close(keeper)
		var b [1]byte
		for range 3 {
			if n, _ := unix.Read(fds[1], b[:]); n != 1 {
				return
			}
			time.Sleep(200 * time.Millisecond)
			unix.SendmsgN(fds[1], []byte{proto.KeeperMount}, unix.UnixRights(nullFD, lockFD), nil, 0)
		}
	}()
	defer func() { <-keeper }()
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
		c, err := h.Clone()
		if err != nil {
			t.Fatalf("Clone, interrupted by signals: %v", err)
		}
		c.Close()
	}
}

// TestHomeResetFollowsNoSymlink: a symlink put in the place of the home's
// directory (by a command that could write the state directory) does not
// make wsh home reset remove what it points to.
func TestHomeResetFollowsNoSymlink(t *testing.T) {
	p := testPlan(t)
	victim := filepath.Join(p.Home, "victim")
	for _, d := range []string{"upper", "work", proto.GensDir} {
		if err := os.MkdirAll(filepath.Join(victim, d), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(victim, d, "important"), []byte("x"), 0o644)
	}
	if err := os.MkdirAll(filepath.Dir(p.Dir()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, p.Dir()); err != nil {
		t.Fatal(err)
	}
	if _, err := ResetHome(p); err == nil {
		t.Errorf("ResetHome through a symlink succeeded")
	}
	for _, d := range []string{"upper", "work", proto.GensDir} {
		if _, err := os.Stat(filepath.Join(victim, d, "important")); err != nil {
			t.Errorf("ResetHome removed %s/important where the symlink led: %v", d, err)
		}
	}
	os.Remove(p.Dir())
}

// TestHomeNoSecondSuperblock: a mount of the overlay that is still in use
// without its lock (a descriptor a command passed out of its jail, the
// processes of a jail whose init was killed) keeps the keeper from
// mounting the upper directory again: the kernel refuses (index=on), and
// no clone of a second overlay is handed out.
func TestHomeNoSecondSuperblock(t *testing.T) {
	defer func(d time.Duration) { KeeperRefresh = d }(KeeperRefresh)
	KeeperRefresh = 50 * time.Millisecond
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	c, err := h.Clone()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Openat(int(c.Mount.Fd()), "escaped", unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var escaped unix.Stat_t
	unix.Fstat(fd, &escaped)
	c.Close() // the lock goes; the file stays open
	time.Sleep(2 * KeeperRefresh)
	c2, err := h.Clone()
	if err == nil {
		defer c2.Close()
		if d := devOf(t, c2); d != escaped.Dev {
			t.Fatalf("a second overlay of the upper directory (device %d) while the first (%d) is in use", d, escaped.Dev)
		}
		return
	}
	if !errors.Is(err, errKeeperRefused) || !errors.Is(err, unix.EBUSY) {
		t.Errorf("Clone while an earlier mount is in use: %v, want the keeper's EBUSY", err)
	}
}

// TestHomeReconnect: a connection the keeper closed (it ended, idle, as
// this process connected) is not the home lost: Clone connects again.
func TestHomeReconnect(t *testing.T) {
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fds[1])
	unix.Close(h.conn)
	h.conn = fds[0] // a connection whose other end is gone
	c, err := h.Clone()
	if err != nil {
		t.Fatalf("Clone after the keeper's end of the connection closed: %v", err)
	}
	c.Close()
}

// TestHomeKeeperSilent: a keeper that does not answer in time (stopped,
// or hung) is not asked again, through a new connection, by this Clone or
// a later one: the home is lost to the process, whose later commands get
// a read-only home at once instead of waiting for it each time.
func TestHomeKeeperSilent(t *testing.T) {
	p := testPlan(t)
	h, err := OpenHome(p)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1]) // the silent keeper's end: open, never answering
	tv := unix.Timeval{Usec: 100000}
	if err := unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	unix.Close(h.conn)
	h.conn = fds[0]
	if c, err := h.Clone(); err == nil {
		c.Close()
		t.Fatal("Clone from a keeper that does not answer succeeded: it connected again")
	} else if !errors.Is(err, unix.EAGAIN) {
		t.Errorf("Clone from a keeper that does not answer: %v, want its timeout", err)
	}
	if _, err := h.Clone(); err == nil || err != h.lost {
		t.Errorf("a second Clone: %v, want the home lost", err)
	}
}
