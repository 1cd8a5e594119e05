//go:build linux && cgo

package launch

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// childIO gives a child its three standard streams the way os/exec does:
// an *os.File is passed on, nil is /dev/null, and any other reader or
// writer gets a pipe and a goroutine that copies. The same writer for
// stdout and stderr gets one pipe, so their order is kept.
//
// An *os.File is passed on as a copy of its descriptor, made while the
// file is held open: the interpreter may close it from another goroutine
// (mvdan.cc/sh closes a pipe's end when its side of a pipeline returns,
// while a background job there may still start commands), and its number
// could then name another file by the time the child is started. A file
// that is already closed is /dev/null to the child.
type childIO struct {
	child   [3]*os.File // the child's ends
	closeAt []*os.File  // ours to close once the child has them
	parent  []*os.File  // our ends of the pipes
	copies  []func()
	outputs int // how many of copies, from the first, write to the caller
	wg      sync.WaitGroup
	outWG   sync.WaitGroup // the copies that write to the caller's writers
}

func newChildIO(stdin io.Reader, stdout, stderr io.Writer) (*childIO, error) {
	c := &childIO{}
	var err error
	if c.child[0], err = c.input(stdin); err == nil {
		if c.child[1], err = c.output(stdout); err == nil {
			if sameWriter(stdout, stderr) {
				c.child[2] = c.child[1]
			} else {
				c.child[2], err = c.output(stderr)
			}
		}
	}
	if err != nil {
		c.closeChildEnds()
		c.closeParentEnds()
		return nil, err
	}
	return c, nil
}

func (c *childIO) input(r io.Reader) (*os.File, error) {
	switch r := r.(type) {
	case nil:
		return c.devNull(os.O_RDONLY)
	case *os.File:
		return c.pass(r, os.O_RDONLY)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closeAt = append(c.closeAt, pr)
	c.parent = append(c.parent, pw)
	c.copies = append(c.copies, func() {
		io.Copy(pw, r) // EPIPE: the jail stopped reading, as os/exec ignores
		pw.Close()
	})
	return pr, nil
}

func (c *childIO) output(w io.Writer) (*os.File, error) {
	switch w := w.(type) {
	case nil:
		return c.devNull(os.O_WRONLY)
	case *os.File:
		return c.pass(w, os.O_WRONLY)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closeAt = append(c.closeAt, pw)
	c.parent = append(c.parent, pr)
	c.copies = append([]func(){func() {
		io.Copy(w, pr)
		pr.Close()
	}}, c.copies...)
	c.outputs++
	return pw, nil
}

// pass returns a copy of f's descriptor, made while f is held open, or
// /dev/null (opened with flag) if f is closed.
func (c *childIO) pass(f *os.File, flag int) (*os.File, error) {
	// As os/exec does: Fd puts the descriptor in blocking mode, which the
	// child expects (Go's own pipes are non-blocking). Its number is not
	// used: it may be stale by the time it is returned.
	f.Fd()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd int
	var derr error
	err = rc.Control(func(fd uintptr) {
		nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err != nil {
		// Control's error for a closed file is internal to os; Stat's is
		// os.ErrClosed, and a closed file stays closed.
		if _, serr := f.Stat(); errors.Is(serr, os.ErrClosed) {
			return c.devNull(flag)
		}
		return nil, err
	}
	if derr != nil {
		return nil, os.NewSyscallError("fcntl(F_DUPFD_CLOEXEC)", derr)
	}
	d := os.NewFile(uintptr(nfd), f.Name())
	c.closeAt = append(c.closeAt, d)
	return d, nil
}

func (c *childIO) devNull(flag int) (*os.File, error) {
	f, err := os.OpenFile(os.DevNull, flag, 0)
	if err != nil {
		return nil, err
	}
	c.closeAt = append(c.closeAt, f)
	return f, nil
}

// start starts the copying, once the child has its ends.
func (c *childIO) start() {
	for i, f := range c.copies {
		out := i < c.outputs
		c.wg.Add(1)
		if out {
			c.outWG.Add(1)
		}
		go func() {
			defer c.wg.Done()
			if out {
				defer c.outWG.Done()
			}
			f()
		}()
	}
}

// wait waits for the copying to end, after the child has exited: at most
// delay, as os/exec's WaitDelay does, because a process outside the jail
// (or, in a session, one the command left running) may hold a pipe the
// jail handed it. Then our ends are closed, which ends every copy but one
// blocked reading the caller's stdin, and wait returns once the copies to
// the caller's writers have ended: none writes to them after it.
func (c *childIO) wait(delay time.Duration) {
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.closeParentEnds()
		c.outWG.Wait()
	}
}

func (c *childIO) closeChildEnds() {
	for _, f := range c.closeAt {
		f.Close()
	}
	c.closeAt = nil
}

func (c *childIO) closeParentEnds() {
	for _, f := range c.parent {
		f.Close() // a copy that ended has closed it already
	}
}

// sameWriter reports whether a and b are the same writer; like os/exec, it
// treats writers that cannot be compared as different.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
