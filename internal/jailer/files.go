//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
	"wsh/internal/session"
	"wsh/internal/sweep"
)

// files is the shell's own file access done in the jail: every open,
// listing, stat and access check of the interpreter (redirections, globs,
// cd, test, source, the lookup of a command in PATH) is carried out by the
// file server (proto.FilesArg0), a command of the session's jail, or of a
// jail of its own with WSH_JAIL=command or where the rung has no session.
// It hands back a descriptor opened in the jail or an errno: what the
// shell sees is what a command sees, decided by the kernel. The server is
// started at the first access, and again after its jail ended (a session
// made anew).
type files struct {
	j        *Jailer
	mu       sync.Mutex
	conn     *filesConn
	closed   bool
	stopSaid sync.Once
}

// A filesConn is one file server and wsh's end of its channel.
type filesConn struct {
	sock *os.File
	fd   int
	sj   *session.Jail // the session it runs in; nil: a jail of its own
	// made is what its jail was made with: the session's, or, for a jail
	// of its own, the same record (no session in it).
	made  *session.Jail
	wmu   sync.Mutex
	mu    sync.Mutex
	id    uint64
	wait  map[uint64]chan fileReply
	end   chan struct{} // closed when the channel has ended
	why   error         // why, set before end is closed
	stop  context.CancelFunc
	gone  chan struct{} // closed once the server's launch returned
	pidfd atomic.Int64  // the server's pidfd (its first answer), or -1
	said  *sync.Once    // that a command stopped it, said once a Jailer
	warn  io.Writer
	// closing is set when wsh ends it (close); sayEnd says once that it
	// ended otherwise.
	closing   atomic.Bool
	sayEnd    sync.Once
	closeOnce sync.Once
	shut      bool // guarded by wmu: the channel is shut down
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

// errFilesEnded is an access whose server ended before it answered.
var errFilesEnded = errors.New("the jail's file server ended")

// do sends r and waits for its answer: the descriptor an open made, or
// the errno. A server that ended before it answered (its session's jail
// made anew, or killed) is started again, once.
func (f *files) do(ctx context.Context, r proto.FileRequest) (*os.File, error) {
	return f.doWith(ctx, r, "", nil)
}

// doWith is do for a write (an open that writes, creates, truncates or
// appends), made by a shell working in dir, whose protection there the
// caller took (prot): the jail it is done in must protect what a
// command's jail in dir would.
func (f *files) doWith(ctx context.Context, r proto.FileRequest, dir string, prot *protect.Protection) (*os.File, error) {
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
		if errors.Is(err, errFilesEnded) && try == 0 {
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

// resolve is where path leads in the jail.
func (f *files) resolve(ctx context.Context, path string) (string, error) {
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
		if errors.Is(err, errFilesEnded) && try == 0 {
			f.drop(c)
			continue
		}
		return rep.path, err
	}
}

// get returns the server for an access in dir (a write, or not): the
// running one while its jail is what a jail made now would be, else one
// started now. A session's jail that is stale for its own directory is
// made anew, as a command's access would make it (session.Sessions.Renew); one
// stale only for dir (a protected path there it does not protect) leaves
// this access to a server in a jail of its own, made for dir (oneOff).
func (f *files) get(write bool, dir string, prot *protect.Protection) (c *filesConn, oneOff bool, err error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, false, errFilesEnded
	}
	if v, refused := f.j.Refused(); refused {
		f.mu.Unlock()
		return nil, false, &refusedError{v}
	}
	c = f.conn
	if c != nil && c.isEnded() {
		f.said(c)
		f.conn, c = nil, nil
	}
	if c != nil {
		why, elsewhere := f.j.filesStale(c, write, dir, prot)
		switch {
		case why == "":
			f.mu.Unlock()
			return c, false, nil
		case elsewhere:
			f.mu.Unlock()
			c, err = f.j.startFiles(dir, false)
			return c, true, err
		}
		f.conn = nil
		f.mu.Unlock()
		if c.sj != nil {
			f.j.sessions.Renew(c.sj, why)
		}
		c.close()
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			return nil, false, errFilesEnded
		}
		if f.conn != nil {
			c = f.conn
			f.mu.Unlock()
			return c, false, nil
		}
	}
	defer f.mu.Unlock()
	if c, err = f.j.startFiles(f.j.filesDir(), true); err != nil {
		return nil, false, fmt.Errorf("the jail's file server: %w", err)
	}
	f.conn = c
	return c, false, nil
}

// protectInSession binds in the live session's jail, as a command's
// start would (session.Sessions.Run), the protected paths that appeared since it
// was made, before a write of the shell's in dir whose protection is
// prot (echo x > .gitignore right after git init): the session, and what
// runs in it, go on. When they cannot be bound, get finds the session
// stale and makes it anew, as before.
func (f *files) protectInSession(ctx context.Context, dir string, prot *protect.Protection) {
	f.mu.Lock()
	c := f.conn
	f.mu.Unlock()
	if c == nil || c.sj == nil || c.isEnded() {
		return // the next server is started in a jail made now
	}
	sj := c.sj
	if sj.Rung() != degrade.RungFull || sj.Unprotected(prot) == "" {
		return // the common case, before the look at the hidden paths
	}
	hidden := f.j.sessions.Print(sj.Rung())
	if !sj.Protectable(hidden) || sj.Stale(prot, hidden) == "" {
		return
	}
	own := *prot
	if dir != sj.Dir() {
		var err error
		if own, err = f.j.protector.Protection(sj.Dir(), true); err != nil {
			return // get says it, as it finds the session stale
		}
	}
	if sj.Stale(&own, hidden) == "" {
		return // stale for dir alone: a server of its own does it (get)
	}
	f.j.noteConfigs(&own)
	if err := f.j.sessions.ProtectInPlace(ctx, sj, &own); err != nil {
		fmt.Fprintf(f.j.warn, "wsh: %s could not be protected in the session's jail (%v)\n", sj.Unprotected(&own), err)
	}
}

// filesStale says why c's jail is not what a jail made now would be for
// an access in dir ("" when it is), and whether only for dir.
func (j *Jailer) filesStale(c *filesConn, write bool, dir string, prot *protect.Protection) (why string, elsewhere bool) {
	m := c.made
	if why := m.Stale(&protect.Protection{}, j.sessions.Print(m.Rung())); why != "" {
		return why, false
	}
	if !write || prot == nil || m.Rung() != degrade.RungFull {
		// The protected paths are mounts on the full rung alone (a lower
		// rung says after a command which changed); what is read, listed
		// or stated does not depend on them.
		return "", false
	}
	p := m.Unprotected(prot)
	if p == "" {
		return "", false
	}
	if dir != m.Dir() {
		if own, err := j.protector.Protection(m.Dir(), true); err == nil && m.Unprotected(&own) == "" {
			return "a protected path in " + dir, true
		}
	}
	return "a protected path appeared since the session's jail was made (" + p + ")", false
}

func (c *filesConn) isEnded() bool {
	select {
	case <-c.end:
		return true
	default:
		return false
	}
}

// drop forgets c, if it is the current server, whose channel ended. A
// send can fail (the server is killed) before wsh's reader of the
// channel saw its end and the launch said why: that is waited for, a
// while, so that the end is said with its reason.
func (f *files) drop(c *filesConn) {
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
func (f *files) said(c *filesConn) {
	if c.closing.Load() || !c.isEnded() {
		return
	}
	c.sayEnd.Do(func() {
		c.mu.Lock()
		why := c.why
		c.mu.Unlock()
		fmt.Fprintf(f.j.warn, "wsh: the jail's file server ended (%v); another does the shell's file access\n", why)
	})
}

// reset ends the server of session sj (made anew): the next access starts
// one in the session in force.
func (f *files) reset(sj *session.Jail) {
	f.mu.Lock()
	c := f.conn
	if c != nil && c.sj == sj {
		f.conn = nil
	} else {
		c = nil
	}
	f.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// close ends the server, for good.
func (f *files) close() {
	f.mu.Lock()
	c := f.conn
	f.conn, f.closed = nil, true
	f.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// startFiles starts a file server: in the session's jail (inSession, and
// a session is in force), or in a jail of its own on the rung in force,
// made for dir.
func (j *Jailer) startFiles(dir string, inSession bool) (*filesConn, error) {
	if _, degraded := j.state.Degraded(); degraded {
		j.warnOnce() // a script of builtins alone says the rung too
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "files"), os.NewFile(uintptr(pair[1]), "files")
	ctx, cancel := context.WithCancel(context.Background())
	c := &filesConn{sock: ours, fd: pair[0], wait: map[uint64]chan fileReply{}, end: make(chan struct{}), stop: cancel, gone: make(chan struct{}),
		said: &j.files.stopSaid, warn: j.warn}
	c.pidfd.Store(-1)
	args := []string{proto.FilesArg0}
	run := func() degrade.Facts {
		if sj := c.sj; sj != nil {
			// Its pidfd from its start, from the host's view: a command
			// of the session can stop it before it says a word itself.
			return sj.Run(ctx, &launch.Command{Path: "/proc/self/exe", Args: args, Dir: sj.Dir(), Stdin: theirs, Started: c.takePid})
		}
		// Its output is /dev/null: it writes none (a crash is said by
		// its end), and the warning stream may be a caller's writer
		// that other copies write to.
		req, pp := j.request(j.rung, dir, "/proc/self/exe", args, nil, theirs, nil, nil)
		req.Spec.UmaskSet = true
		done := j.home.Attach(req)
		out := launch.Run(ctx, req)
		done()
		if pp.prot != nil {
			j.watchProtection(pp.prot, false)
		}
		if pp.err != nil {
			// The protected paths cannot all be known: the init failed
			// its protect step on purpose; that is the reason.
			out = degrade.Facts{StartErr: pp.err}
		}
		return out
	}
	if sj := j.sessions.Current(); inSession && sj != nil && sj.Rung() == j.rung && sj.Live() {
		c.sj, c.made = sj, sj
	} else {
		// What its jail is made with, taken before it is: a change
		// between the two makes it stale at once, never fresh wrongly.
		hidden := j.sessions.Print(j.rung)
		var made *protect.Protection
		if j.rung == degrade.RungFull {
			prot, err := j.protector.Protection(dir, true)
			if err != nil {
				ours.Close()
				theirs.Close()
				cancel()
				return nil, err
			}
			made = &prot
		}
		c.made = session.Record(j.rung, dir, hidden, made)
	}
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

// filesDir is where a file server of its own starts: the start directory
// as the jail resolves it.
func (j *Jailer) filesDir() string {
	if d, err := filepath.EvalSymlinks(j.startDir); err == nil {
		return d
	}
	return j.startDir
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

// read hands each answer to its request until the channel ends.
func (c *filesConn) read() {
	buf := make([]byte, proto.MaxFileAnswer+1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(c.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			c.ended()
			return
		}
		fds := proto.Rights(oob[:oobn])
		a, derr := proto.DecodeFileAnswer(buf[:n])
		if derr != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || len(fds) > 1 ||
			len(fds) == 1 && a.Errno != 0 {
			closeFDs(fds)
			c.ended()
			return
		}
		fd := -1
		if len(fds) == 1 {
			fd = fds[0]
		}
		if a.ID == 0 {
			// The server's own pidfd (its first answer): kept where the
			// session gave none (takePid).
			if fd >= 0 && !c.pidfd.CompareAndSwap(-1, int64(fd)) {
				unix.Close(fd)
			}
			continue
		}
		c.mu.Lock()
		ch := c.wait[a.ID]
		delete(c.wait, a.ID)
		c.mu.Unlock()
		if ch == nil {
			closeFDs(fds) // its request was given up
			continue
		}
		ch <- fileReply{errno: syscall.Errno(a.Errno), fd: fd, path: a.Path}
	}
}

// ended marks the channel's end, once the server's launch said why.
func (c *filesConn) ended() {
	select {
	case <-c.gone:
	default:
		c.stop() // a server that wrote what wsh does not read: ended
		<-c.gone
	}
	close(c.end)
}

// do sends r and waits for its answer.
func (c *filesConn) do(ctx context.Context, r proto.FileRequest) (fileReply, error) {
	ch := make(chan fileReply, 1)
	c.mu.Lock()
	c.id++
	r.ID = c.id
	c.wait[r.ID] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.wait, r.ID)
		c.mu.Unlock()
		select {
		case rep := <-ch: // answered meanwhile
			closeFDs([]int{rep.fd})
		default:
		}
	}
	b, err := r.Encode()
	if err != nil {
		forget()
		return fileReply{fd: -1}, unix.ENAMETOOLONG
	}
	c.wmu.Lock()
	if c.shut {
		err = unix.EPIPE
	} else {
		err = unix.Sendmsg(c.fd, b, nil, nil, unix.MSG_NOSIGNAL)
	}
	c.wmu.Unlock()
	if err != nil {
		forget()
		return fileReply{fd: -1}, errFilesEnded
	}
	check := time.NewTimer(stopCheck)
	defer check.Stop()
	for {
		select {
		case rep := <-ch:
			if rep.errno != 0 {
				return fileReply{fd: -1}, rep.errno
			}
			return rep, nil
		case <-check.C:
			c.goOn()
			check.Reset(stopCheck)
			continue
		case <-c.end:
			forget()
			c.mu.Lock()
			why := c.why
			c.mu.Unlock()
			return fileReply{fd: -1}, fmt.Errorf("%w (%v)", errFilesEnded, why)
		case <-ctx.Done():
			forget()
			return fileReply{fd: -1}, ctx.Err()
		}
	}
}

// takePid keeps a pidfd of the server, host pid pid, as its session said
// it started.
func (c *filesConn) takePid(pid int) {
	if pid <= 0 {
		return
	}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil && !c.pidfd.CompareAndSwap(-1, int64(fd)) {
		unix.Close(fd)
	}
}

// stopCheck is how long an answer is waited for before wsh looks whether
// the server was stopped, and how often after.
const stopCheck = 100 * time.Millisecond

// goOn lets the server go on if a command stopped it (SIGSTOP, which it
// cannot ignore; it ignores the terminal's stops), and says so once. An
// answer may be slow for its own reasons (an open of a FIFO waits for the
// other end): that is no stop.
func (c *filesConn) goOn() {
	fd := int(c.pidfd.Load())
	if fd < 0 || !isStopped(fd) {
		return
	}
	if unix.PidfdSendSignal(fd, unix.SIGCONT, nil, 0) == nil && c.said != nil {
		c.said.Do(func() {
			fmt.Fprintln(c.warn, "wsh: a command stopped the jail's file server, which does the shell's own file access; wsh let it go on (each time it is stopped)")
		})
	}
}

// isStopped says that the process of pidfd is stopped: its state in
// /proc/PID/stat, PID read from the pidfd's fdinfo (in wsh's namespace).
func isStopped(pidfd int) bool {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return false
	}
	pid := ""
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pid:"); ok {
			pid = strings.TrimSpace(v)
		}
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return false // gone (-1), or not in this namespace (0)
	}
	p, ok := sweep.Stat(n)
	return ok && (p.State == 'T' || p.State == 't')
}

// close ends the server: it reads the channel's end and exits; its
// launch is cancelled too, for a server that does not.
func (c *filesConn) close() {
	c.closeOnce.Do(func() {
		c.closing.CompareAndSwap(false, !c.isEnded())
		// Under wmu, and once: after it no send uses the descriptor,
		// whose number a later server's channel may get once it is
		// closed.
		c.wmu.Lock()
		c.shut = true
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		c.wmu.Unlock()
		<-c.end
		c.stop()
		if fd := c.pidfd.Swap(-2); fd >= 0 {
			unix.Close(int(fd))
		}
		c.sock.Close()
	})
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
