//go:build linux && cgo

package shellfs

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/sweep"
)

// A filesConn is one file server and wsh's end of its channel.
type filesConn struct {
	sock  *os.File
	fd    int
	jail  Jail // the jail it runs in
	wmu   sync.Mutex
	mu    sync.Mutex
	id    uint64
	wait  map[uint64]chan fileReply
	end   chan struct{} // closed when the channel has ended
	why   error         // why, set before end is closed
	stop  context.CancelFunc
	gone  chan struct{} // closed once the server's launch returned
	pidfd atomic.Int64  // the server's pidfd (its first answer), or -1
	said  *sync.Once    // that a command stopped it, said once a Files
	warn  io.Writer
	// closing is set when wsh ends it (close); sayEnd says once that it
	// ended otherwise.
	closing   atomic.Bool
	sayEnd    sync.Once
	closeOnce sync.Once
	shut      bool // guarded by wmu: the channel is shut down
}

func (c *filesConn) isEnded() bool {
	select {
	case <-c.end:
		return true
	default:
		return false
	}
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
			proto.CloseRights(fds)
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
			proto.CloseRights(fds) // its request was given up
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
			proto.CloseRights([]int{rep.fd})
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
		return fileReply{fd: -1}, ErrEnded
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
			return fileReply{fd: -1}, fmt.Errorf("%w (%v)", ErrEnded, why)
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
