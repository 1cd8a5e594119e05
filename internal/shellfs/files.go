//go:build linux && cgo

package shellfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Files is the shell's own file access done in the jail: every open,
// listing, stat and access check of the interpreter (redirections, globs,
// cd, test, source, the lookup of a command in PATH) is carried out by the
// file server (proto.FilesArg0), a command of the session's jail, or of a
// jail of its own with WSH_JAIL=command or where the rung has no session.
// It hands back a descriptor opened in the jail or an errno: what the
// shell sees is what a command sees, decided by the kernel. The server is
// started at the first access, and again after its jail ended (a session
// made anew).
type Files struct {
	core     Core
	mu       sync.Mutex
	conn     *filesConn
	closed   bool
	stopSaid sync.Once
}

// Core is what the file access needs of the Runner's core (the Jailer).
type Core struct {
	// Refused is the verdict of a host that refused the jail (true)
	// where none may be done without one: no access is done.
	Refused func() (degrade.Verdict, bool)
	// Launch makes ready a file server's jail: the session's where dir
	// is "" and a session is in force, else one of its own on the rung
	// in force, made for dir (the start directory where dir is ""). sock
	// is the server's end of its channel (its stdin); started is given
	// its host pid where its session says it started. run runs it, and
	// returns once it ended.
	Launch func(ctx context.Context, dir string, sock *os.File, started func(pid int)) (jail Jail, run func() degrade.Facts, err error)
	// Write takes, before a write of the shell's whose handler's
	// directory is dir, the protection of host, the directory the write
	// is done in; done is called once it was opened, or failed. It
	// returns ErrEnded where the Runner is closing.
	Write func(dir string) (host string, prot *protect.Protection, done func(), err error)
	// Umask is the mask of the script hc is of.
	Umask func(hc interp.HandlerContext) (uint32, error)
	// FailClosed marks the Run of ctx as failed closed, and returns the
	// error that stops the interpreter.
	FailClosed func(ctx context.Context) error
	// Warn is where what happened to a server is said.
	Warn io.Writer
}

// A Jail is the jail a file server runs in, as Core.Launch made it.
type Jail interface {
	// Stale says why the jail is not what a jail made now would be for
	// an access in dir (a write, whose protection is prot, or not), ""
	// when it is, and whether only for dir.
	Stale(write bool, dir string, prot *protect.Protection) (why string, elsewhere bool)
	// Renew makes the jail anew, for why, where it is a session's.
	Renew(why string)
	// Protect binds in the jail, where it is a live session's, the
	// protected paths of prot that appeared since it was made, before a
	// write in dir.
	Protect(ctx context.Context, dir string, prot *protect.Protection)
}

// New returns the shell's file access of a Runner whose core is core.
func New(core Core) *Files {
	return &Files{core: core}
}

type fileReply struct {
	errno syscall.Errno
	fd    int
	path  string
}

// A refusedError is an access with no jail to do it in: the host refuses
// the jail, and WSH_REQUIRE_SANDBOX is set.
type refusedError struct{ v degrade.Verdict }

func (e *refusedError) Error() string { return e.v.Message() }

// ErrEnded is an access whose server ended before it answered, or that
// came as the Runner closed.
var ErrEnded = errors.New("the jail's file server ended")

// do sends r and waits for its answer: the descriptor an open made, or
// the errno. A server that ended before it answered (its session's jail
// made anew, or killed) is started again, once.
func (f *Files) do(ctx context.Context, r proto.FileRequest) (*os.File, error) {
	return f.doWith(ctx, r, "", nil)
}

// doWith is do for a write (an open that writes, creates, truncates or
// appends), made by a shell working in dir, whose protection there the
// caller took (prot): the jail it is done in must protect what a
// command's jail in dir would.
func (f *Files) doWith(ctx context.Context, r proto.FileRequest, dir string, prot *protect.Protection) (*os.File, error) {
	if r.Path == "" {
		return nil, unix.ENOENT // as the kernel answers an empty path
	}
	write := prot != nil
	if write {
		f.protectInSession(ctx, dir, prot)
	}
	for try := 0; ; try++ {
		c, oneOff, err := f.get(write, dir, prot)
		if err != nil {
			return nil, err
		}
		rep, err := c.do(ctx, r)
		if oneOff {
			c.close()
		}
		if errors.Is(err, ErrEnded) && try == 0 {
			f.drop(c)
			continue
		}
		if err != nil {
			return nil, err
		}
		if rep.fd < 0 {
			return nil, nil
		}
		return os.NewFile(uintptr(rep.fd), r.Path), nil
	}
}

// Resolve is where path leads in the jail (proto.FileResolve).
func (f *Files) Resolve(ctx context.Context, path string) (string, error) {
	if path == "" {
		return "", unix.ENOENT
	}
	for try := 0; ; try++ {
		c, oneOff, err := f.get(false, "", nil)
		if err != nil {
			return "", err
		}
		rep, err := c.do(ctx, proto.FileRequest{Kind: proto.FileResolve, Path: path})
		if oneOff {
			c.close()
		}
		if errors.Is(err, ErrEnded) && try == 0 {
			f.drop(c)
			continue
		}
		return rep.path, err
	}
}

// get returns the server for an access in dir (a write, or not): the
// running one while its jail is what a jail made now would be, else one
// started now. A session's jail that is stale for its own directory is
// made anew, as a command's access would make it (Jail.Renew); one
// stale only for dir (a protected path there it does not protect) leaves
// this access to a server in a jail of its own, made for dir (oneOff).
func (f *Files) get(write bool, dir string, prot *protect.Protection) (c *filesConn, oneOff bool, err error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, false, ErrEnded
	}
	if v, refused := f.core.Refused(); refused {
		f.mu.Unlock()
		return nil, false, &refusedError{v}
	}
	c = f.conn
	if c != nil && c.isEnded() {
		f.said(c)
		f.conn, c = nil, nil
	}
	if c != nil {
		why, elsewhere := c.jail.Stale(write, dir, prot)
		switch {
		case why == "":
			f.mu.Unlock()
			return c, false, nil
		case elsewhere:
			f.mu.Unlock()
			c, err = f.start(dir)
			return c, true, err
		}
		f.conn = nil
		f.mu.Unlock()
		c.jail.Renew(why)
		c.close()
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, false, ErrEnded
		}
		if f.conn != nil {
			c = f.conn
			f.mu.Unlock()
			return c, false, nil
		}
	}
	defer f.mu.Unlock()
	if c, err = f.start(""); err != nil {
		return nil, false, fmt.Errorf("the jail's file server: %w", err)
	}
	f.conn = c
	return c, false, nil
}

// protectInSession has the live session's jail bind, as a command's
// start would, the protected paths that appeared since it was made,
// before a write of the shell's in dir whose protection is prot (echo x >
// .gitignore right after git init): the session, and what runs in it, go
// on. When they cannot be bound, get finds the session stale and makes it
// anew, as before.
func (f *Files) protectInSession(ctx context.Context, dir string, prot *protect.Protection) {
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	if c == nil || c.isEnded() {
		return // the next server is started in a jail made now
	}
	c.jail.Protect(ctx, dir, prot)
}

// drop forgets c, if it is the current server, whose channel ended. A
// send can fail (the server is killed) before wsh's reader of the
// channel saw its end and the launch said why: that is waited for, a
// while, so that the end is said with its reason.
func (f *Files) drop(c *filesConn) {
	f.mu.Lock()
	if f.conn == c {
		f.conn = nil
	}
	f.mu.Unlock()
	if !c.closing.Load() {
		t := time.NewTimer(endWait)
		select {
		case <-c.end:
		case <-t.C:
		}
		t.Stop()
	}
	f.said(c)
	c.close()
}

// endWait bounds drop's wait for a server's end to be known.
const endWait = 2 * time.Second

// said says, once for each server, that it ended without wsh ending it
// (killed by a command of its jail, say): the next access starts another.
func (f *Files) said(c *filesConn) {
	if c.closing.Load() || !c.isEnded() {
		return
	}
	c.sayEnd.Do(func() {
		c.mu.Lock()
		why := c.why
		c.mu.Unlock()
		fmt.Fprintf(f.core.Warn, "wsh: the jail's file server ended (%v); another does the shell's file access\n", why)
	})
}

// Reset ends the server whose jail of says (its session's, made anew):
// the next access starts one in the session in force.
func (f *Files) Reset(of func(Jail) bool) {
	f.mu.Lock()
	c := f.conn
	if c != nil && of(c.jail) {
		f.conn = nil
	} else {
		c = nil
	}
	f.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// Close ends the server, for good.
func (f *Files) Close() {
	f.mu.Lock()
	c := f.conn
	f.conn, f.closed = nil, true
	f.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// start starts a file server: in the session's jail (dir "", and a
// session is in force), or in a jail of its own on the rung in force,
// made for dir (Core.Launch).
func (f *Files) start(dir string) (*filesConn, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "files"), os.NewFile(uintptr(pair[1]), "files")
	ctx, cancel := context.WithCancel(context.Background())
	c := &filesConn{sock: ours, fd: pair[0], wait: map[uint64]chan fileReply{}, end: make(chan struct{}), stop: cancel, gone: make(chan struct{}),
		said: &f.stopSaid, warn: f.core.Warn}
	c.pidfd.Store(-1)
	jail, run, err := f.core.Launch(ctx, dir, theirs, c.takePid)
	if err != nil {
		ours.Close()
		theirs.Close()
		cancel()
		return nil, err
	}
	c.jail = jail
	go func() {
		out := run()
		theirs.Close() // the server's end: its reader sees the end now
		c.mu.Lock()
		c.why = factsError(out)
		c.mu.Unlock()
		close(c.gone)
	}()
	go c.read()
	return c, nil
}

// factsError says why a file server's launch ended.
func factsError(out degrade.Facts) error {
	switch {
	case out.StartErr != nil:
		return out.StartErr
	case out.Report != nil:
		return fmt.Errorf("%s: %v", out.Report.Step, out.Report.Errno)
	}
	return fmt.Errorf("it exited with status %d", out.Status)
}
