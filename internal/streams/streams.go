//go:build linux && cgo

package streams

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// statusFlags are the file status flags F_SETFL changes: those of an
// open file description, which every process given the descriptor shares.
const statusFlags = unix.O_APPEND | unix.O_ASYNC | unix.O_DIRECT | unix.O_NOATIME | unix.O_NONBLOCK

// Given holds the file status flags of the streams a Runner was
// given, as they were when it was made, to put back after each external
// command that leaves no foreground one running, and when the Runner
// closes. A command given such a
// stream shares its open file description with wsh's parent and
// everything else that has it: O_NONBLOCK set there (node sets it on its
// standard streams) makes the next program that reads the user's
// terminal, or a make reading wsh's output through a pipe, get EAGAIN;
// O_APPEND cleared on a log makes the writers after it overwrite it.
// Every kind of stream is put back, not only terminals: a pipe's or a
// file's description is its parent's as much as a terminal's is.
type Given struct {
	mu sync.Mutex
	s  []*givenStream
}

type givenStream struct {
	f     *os.File
	rc    syscall.RawConn // holds the descriptor open while it is used
	flags int
	put   func(fd uintptr) // putBack, made once: a restore allocates nothing
}

// Note saves the status flags of each of the streams that is a file, but
// those of a file saved before. The file's descriptor is not taken with
// Fd, which would make it blocking.
func (gs *Given) Note(streams ...any) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, s := range streams {
		f, ok := s.(*os.File)
		if !ok || f == nil || gs.has(f) {
			continue
		}
		rc, err := f.SyscallConn()
		if err != nil {
			continue
		}
		g := &givenStream{f: f, rc: rc, flags: -1}
		rc.Control(func(fd uintptr) {
			if fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0); err == nil {
				g.flags = fl
			}
		})
		if g.flags < 0 {
			continue
		}
		g.put = g.putBack
		gs.s = append(gs.s, g)
	}
}

func (gs *Given) has(f *os.File) bool {
	for _, g := range gs.s {
		if g.f == f {
			return true
		}
	}
	return false
}

// Restore puts back each stream's status flags that a command changed:
// an F_GETFL for each, and an F_SETFL for one that changed. A stream the
// Runner's caller closed is left alone (its descriptor number may be
// another file's now).
func (gs *Given) Restore() {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	for _, g := range gs.s {
		g.rc.Control(g.put)
	}
}

func (g *givenStream) putBack(fd uintptr) {
	now, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err == nil && now&statusFlags != g.flags&statusFlags {
		unix.FcntlInt(fd, unix.F_SETFL, now&^statusFlags|g.flags&statusFlags)
	}
}
