// Package sweep kills the processes of a session: the processes that share
// a session id, which none of them can leave (setsid is refused to them),
// and into which no other process can come. It is what ends what a lower
// rung's session leaves, where there is no PID namespace to end.
package sweep

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A Proc is what a sweep knows of a process: its parent, process group,
// session, state and flags (proc(5), /proc/PID/stat fields 4, 5, 6, 3
// and 9).
type Proc struct {
	PPid, Pgid, Sid int
	State           byte
	Flags           uint64
}

// live says that p has not exited (a zombie is dead already).
func (p Proc) live() bool { return p.State != 'Z' && p.State != 'X' }

// Stat reads pid's Proc; false when it is gone.
func Stat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return Proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 || len(f[0]) != 1 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	flags, err4 := strconv.ParseUint(f[6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Proc{}, false
	}
	return Proc{PPid: ppid, Pgid: pgid, Sid: sid, State: f[0][0], Flags: flags}, true
}

// Session reads the live processes of session sid, by pid.
func Session(sid int) map[int]Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]Proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok && p.Sid == sid && p.live() {
			out[pid] = p
		}
	}
	return out
}

// Kill kills every live process of session sid but this one, and the
// process group of each, scan after scan, until a scan finds none, or d
// has passed; it returns how many it found in its last scan. A process
// forked meanwhile is found by the next scan; a chain of any depth is
// found by one. Each is signalled through a pidfd, after its session is
// read again through the pid the pidfd holds, so that a pid reused
// meanwhile by a process of another session is never signalled; and its
// group then, which is of the same session as long as that process is in
// it. A group kill reaches every process of the group at once, and a
// fork under way with it (a process of a lower rung's session cannot
// leave its group). But a loop that forks and exits faster than a scan
// reads can leave no live pid for any scan to find, and then Kill
// returns with the loop running: what ends it for sure is a kill of its
// group by a number known before (the zygote's reap and end, launch's
// killGroups). Kill is the last pass, for what those do not name.
func Kill(sid int, d time.Duration) int {
	end := time.Now().Add(d)
	self := os.Getpid()
	for {
		ps := Session(sid)
		delete(ps, self)
		if len(ps) == 0 || time.Now().After(end) {
			return len(ps)
		}
		var fds []unix.PollFd
		for pid := range ps {
			if fd := kill(pid, sid, self); fd >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
		}
		awaitExit(fds, 100*time.Millisecond)
		for _, f := range fds {
			unix.Close(int(f.Fd))
		}
	}
}

// kill sends SIGKILL to pid if it is still of session sid, and to its
// process group unless that is self's, and returns a pidfd of it (-1 when
// there is none: it is gone).
func kill(pid, sid, self int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if err == unix.ENOSYS {
			// Before Linux 5.3: no pidfd. The pid is read and
			// signalled at once.
			if p, ok := Stat(pid); ok && p.Sid == sid {
				unix.Kill(pid, unix.SIGKILL)
				killGroup(p.Pgid, self)
			}
		}
		return -1
	}
	// The pidfd holds the process: if it is the one whose session is read
	// now, the signal reaches it; if it has exited, the signal fails.
	p, ok := Stat(pid)
	if !ok || p.Sid != sid {
		unix.Close(fd)
		return -1
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	killGroup(p.Pgid, self)
	return fd
}

// killGroup kills process group pgid, unless it is self's (the zygote's
// own, where its forks are before they make theirs).
func killGroup(pgid, self int) {
	if pgid > 1 && pgid != unix.Getpgrp() && pgid != self {
		unix.Kill(-pgid, unix.SIGKILL)
	}
}

// awaitExit waits, at most d, until every pidfd of fds is readable (its
// process has exited): then its children have been given to their
// subreaper, where the next scan finds them.
func awaitExit(pidfds []unix.PollFd, d time.Duration) {
	fds := append([]unix.PollFd(nil), pidfds...)
	end := time.Now().Add(d)
	for len(fds) > 0 {
		left := time.Until(end)
		if left <= 0 {
			return
		}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		rest := fds[:0]
		for _, f := range fds {
			if f.Revents == 0 {
				rest = append(rest, f)
			}
		}
		fds = rest
	}
}
