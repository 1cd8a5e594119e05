//go:build linux && cgo

package shellfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/degrade"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A fakeJail is a server's jail that is never stale.
type fakeJail struct{}

func (fakeJail) Stale(bool, string, *protect.Protection) (string, bool) { return "", false }
func (fakeJail) Renew(string)                                           {}
func (fakeJail) Protect(context.Context, string, *protect.Protection)   {}

// serve is a file server in the test process that answers each request
// with answer: an errno, or a descriptor it opened. It ends at the
// channel's end, or after limit requests (limit > 0) without answering
// the last.
func serve(sock *os.File, limit int, answer func(proto.FileRequest) (int, unix.Errno)) degrade.Facts {
	fd := int(sock.Fd())
	buf := make([]byte, proto.MaxFileRequest+1)
	for n := 1; ; n++ {
		k, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || k == 0 {
			return degrade.Facts{}
		}
		r, err := proto.DecodeFileRequest(buf[:k])
		if err != nil || n == limit {
			return degrade.Facts{Status: 3}
		}
		afd, errno := answer(r)
		var oob []byte
		if afd >= 0 {
			oob = unix.UnixRights(afd)
		}
		unix.Sendmsg(fd, proto.FileAnswer{ID: r.ID, Errno: uint32(errno)}.Encode(), oob, nil, unix.MSG_NOSIGNAL)
		if afd >= 0 {
			unix.Close(afd)
		}
	}
}

// testCore is a Core whose servers are serve's, the nth started ending
// after limits[n] requests (none: never).
func testCore(t *testing.T, warn *bytes.Buffer, limits []int, answer func(proto.FileRequest) (int, unix.Errno)) (Core, func() int) {
	var mu sync.Mutex
	started := 0
	core := Core{
		Refused: func() (degrade.Verdict, bool) { return degrade.Verdict{}, false },
		Launch: func(ctx context.Context, dir string, sock *os.File, _ func(int)) (Jail, func() degrade.Facts, error) {
			mu.Lock()
			limit := 0
			if started < len(limits) {
				limit = limits[started]
			}
			started++
			mu.Unlock()
			return fakeJail{}, func() degrade.Facts { return serve(sock, limit, answer) }, nil
		},
		Write: func(dir string) (string, *protect.Protection, func(), error) {
			return dir, &protect.Protection{}, func() {}, nil
		},
		Umask:      func(interp.HandlerContext) (uint32, error) { return 0o022, nil },
		FailClosed: func(context.Context) error { return errStop },
		Warn:       warn,
	}
	return core, func() int { mu.Lock(); defer mu.Unlock(); return started }
}

var errStop = errors.New("the script stops")

// run runs script with f's handlers, and returns its output and error.
func run(t *testing.T, f *Files, script string) (string, error) {
	t.Helper()
	prog, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := interp.New(interp.StdIO(nil, &out, &out), interp.Dir("/"),
		interp.OpenHandler(f.Open), interp.StatHandler(f.Stat), interp.ReadDirHandler2(f.ReadDir), interp.AccessHandler(f.Access))
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background(), prog)
	return out.String(), err
}

// The interpreter sees what the server answers, not the host: a path the
// host has is missing where the server says so, and one the host lacks
// is there where the server opened it.
func TestHandlersSeeTheServersAnswers(t *testing.T) {
	var warn bytes.Buffer
	core, _ := testCore(t, &warn, nil, func(r proto.FileRequest) (int, unix.Errno) {
		if r.Path != "/only-in-the-jail" {
			return -1, unix.ENOENT
		}
		fd, err := unix.Open("/dev/null", unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err.(unix.Errno)
		}
		return fd, 0
	})
	f := New(core)
	defer f.Close()
	out, err := run(t, f, "[ -e /only-in-the-jail ] && echo there; [ -e /proc/self ] || echo missing; : < /proc/version || echo no-open")
	if err != nil {
		t.Fatal(err)
	}
	if want := "there\nmissing\nwsh: /proc/version: No such file or directory\nno-open\n"; out != want {
		t.Errorf("the script said %q, want %q", out, want)
	}
}

// A server that ends before it answers is started again, once, and its
// end is said once.
func TestEndedServerIsStartedAgain(t *testing.T) {
	var warn bytes.Buffer
	core, started := testCore(t, &warn, []int{1}, func(proto.FileRequest) (int, unix.Errno) { return -1, 0 })
	f := New(core)
	defer f.Close()
	out, err := run(t, f, "[ -r /a ] && echo readable")
	if err != nil {
		t.Fatal(err)
	}
	if out != "readable\n" {
		t.Errorf("the script said %q, want readable", out)
	}
	if n := started(); n != 2 {
		t.Errorf("%d servers were started, want 2", n)
	}
	if w := warn.String(); strings.Count(w, "the jail's file server ended (it exited with status 3)") != 1 {
		t.Errorf("the warnings were %q, want the server's end said once", w)
	}
}

// An access where no jail can do it, and none may be done without one,
// stops the script.
func TestRefusedAccessStopsTheScript(t *testing.T) {
	var warn bytes.Buffer
	core, started := testCore(t, &warn, nil, func(proto.FileRequest) (int, unix.Errno) { return -1, 0 })
	core.Refused = func() (degrade.Verdict, bool) { return degrade.Verdict{Kind: degrade.Refused}, true }
	f := New(core)
	defer f.Close()
	out, err := run(t, f, ": < /a; echo went-on")
	if !errors.Is(err, errStop) {
		t.Errorf("the script ended with %v, want the fail-closed stop", err)
	}
	if !strings.Contains(out, "WSH_REQUIRE_SANDBOX is set, so the shell does not open /a; the script stops") || strings.Contains(out, "went-on") {
		t.Errorf("the script said %q", out)
	}
	if n := started(); n != 0 {
		t.Errorf("%d servers were started, want none", n)
	}
}
