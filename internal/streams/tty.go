//go:build linux && cgo

package streams

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Terminals holds the settings of each terminal a jailed command was
// given, as they were before the first of them ran, to put back when the
// Runner closes. A jailed command may change them as it needs to (stty
// -echo before a password is read, a full-screen program's raw mode), as
// on a host; what it must not do is leave the user's terminal unusable
// after wsh is gone (stty stop ^M start undef: no key reaches the shell).
// The window size is not put back: the terminal sets it as it is resized.
type Terminals struct {
	mu    sync.Mutex
	saved map[uint64]savedTerminal // by the terminal's device number
}

type savedTerminal struct {
	fd int // a duplicate, held until restore, so a caller's Close does not matter
	t  unix.Termios
}

// Note saves the settings of each of the streams that is a terminal not
// saved before.
func (ts *Terminals) Note(streams ...any) {
	for _, s := range streams {
		f, ok := s.(*os.File)
		if !ok || f == nil {
			continue
		}
		fd := int(f.Fd())
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Rdev == unix.Mkdev(5, 0) {
			// /dev/tty is the controlling terminal by another device
			// number: saved under it, settings a command changed would
			// be put back too. The terminal itself is saved by its own.
			continue
		}
		ts.mu.Lock()
		if _, ok := ts.saved[st.Rdev]; !ok {
			if dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3); err == nil {
				if ts.saved == nil {
					ts.saved = map[uint64]savedTerminal{}
				}
				ts.saved[st.Rdev] = savedTerminal{fd: dup, t: *t}
			}
		}
		ts.mu.Unlock()
	}
}

// Any reports whether any terminal's settings were saved.
func (ts *Terminals) Any() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.saved) > 0
}

// Restore puts back each terminal's settings, where wsh's process group
// is the terminal's foreground one (from the background, TCSETS would stop
// wsh with SIGTTOU; a background wsh's terminal is the foreground job's).
func (ts *Terminals) Restore() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for dev, s := range ts.saved {
		if pg, err := unix.IoctlGetInt(s.fd, unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
			if now, err := unix.IoctlGetTermios(s.fd, unix.TCGETS); err == nil && *now != s.t {
				unix.IoctlSetTermios(s.fd, unix.TCSETSW, &s.t)
			}
		}
		unix.Close(s.fd)
		delete(ts.saved, dev)
	}
}
