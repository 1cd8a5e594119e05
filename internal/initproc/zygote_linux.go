package initproc

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// What a lower rung's zygote (serveLower) leaves to no process: as the
// subreaper of its commands, every process they leave behind (a job of a
// shell that has exited, a daemon that forked twice) is made its child,
// and no process of its subtree can leave it (it can only be killed).

// killLeftLower kills, when a command has exited, every child of the
// zygote that is no running command: what a command left behind, as
// killOrphans does in a jail's PID namespace. The children of one it
// kills are made its children in turn, and killed by the next pass.
// Called with mu held.
func (s *server) killLeftLower() {
	for pass := 0; pass < 10; pass++ {
		var killed []int
		for _, pid := range liveChildren() {
			if _, running := s.ids[pid]; !running {
				unix.Kill(pid, unix.SIGKILL)
				killed = append(killed, pid)
			}
		}
		if len(killed) == 0 {
			return
		}
		awaitDeath(killed, 100*time.Millisecond)
	}
}

// endLower kills every process of the session: each child of the zygote,
// then the children those leave it, until it has none but the dead.
func (s *server) endLower() {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		kids := liveChildren()
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			unix.Kill(pid, unix.SIGKILL)
		}
		awaitDeath(kids, 100*time.Millisecond)
	}
}

// awaitDeath waits, at most d, until each of pids has exited (a zombie,
// or reaped): its children are then the zygote's.
func awaitDeath(pids []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for time.Now().Before(deadline) {
			if _, state, ok := parentOf(pid); !ok || state == "Z" || state == "X" {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// liveChildren are the children of every thread of this process that
// have not exited.
func liveChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if _, state, ok := parentOf(pid); ok && state != "Z" && state != "X" {
				out = append(out, pid)
			}
		}
	}
	return out
}
