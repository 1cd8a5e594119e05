//go:build linux && cgo

package bench

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A proc is a process of the host, as its /proc shows it.
type proc struct {
	pid, ppid int
	state     string
	args      []string
}

// procs lists the host's processes. Zombies have no command line.
func procs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		p := proc{pid: pid, ppid: ppid, state: f[0]}
		if c, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && len(c) > 0 {
			p.args = strings.Split(strings.TrimRight(string(c), "\x00"), "\x00")
		}
		out = append(out, p)
	}
	return out
}

// childrenOf returns the processes whose parent is pid, zombies included.
func childrenOf(pid int) []proc {
	var out []proc
	for _, p := range procs() {
		if p.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// A snapshot is what this process holds that a jailed exec could leak.
type snapshot struct {
	fds      int               // entries of /proc/self/fd
	children []proc            // processes whose parent is this one: a jail init left running is one
	mounts   int               // lines of /proc/self/mountinfo
	nsfs     int               // namespaces pinned by a bind mount
	ns       map[string]string // this process's own namespaces
	threads  int               // for information: the Go runtime may grow its threads
}

func takeSnapshot(tb testing.TB) snapshot {
	tb.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	s := snapshot{fds: len(fds), children: childrenOf(os.Getpid()), ns: map[string]string{}}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		tb.Fatal(err)
	}
	defer mi.Close()
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		s.mounts++
		if _, after, ok := strings.Cut(sc.Text(), " - "); ok && strings.HasPrefix(after, "nsfs ") {
			s.nsfs++
		}
	}
	for _, n := range []string{"user", "mnt", "pid", "pid_for_children", "net", "ipc", "uts", "cgroup"} {
		l, err := os.Readlink("/proc/self/ns/" + n)
		if err == nil {
			s.ns[n] = l
		}
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	s.threads = len(tasks)
	return s
}

func (s snapshot) String() string {
	return fmt.Sprintf("fds %d, children %d, mounts %d, nsfs mounts %d, threads %d",
		s.fds, len(s.children), s.mounts, s.nsfs, s.threads)
}

// leaks compares a snapshot taken after the execs with the one before and
// returns what was left behind. Processes get a few seconds to be reaped.
func leaks(tb testing.TB, before snapshot) []string {
	tb.Helper()
	var after snapshot
	deadline := time.Now().Add(5 * time.Second)
	for {
		after = takeSnapshot(tb)
		if (len(after.children) == 0 && after.fds <= before.fds) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var out []string
	if after.fds > before.fds {
		out = append(out, fmt.Sprintf("/proc/self/fd: %d entries before, %d after: %s", before.fds, after.fds, fdList()))
	}
	for _, p := range after.children {
		out = append(out, fmt.Sprintf("a child is left: pid %d state %s %q", p.pid, p.state, p.args))
	}
	if after.mounts != before.mounts || after.nsfs != before.nsfs {
		out = append(out, fmt.Sprintf("mounts: %d (%d nsfs) before, %d (%d nsfs) after", before.mounts, before.nsfs, after.mounts, after.nsfs))
	}
	for n, l := range before.ns {
		if after.ns[n] != l {
			out = append(out, fmt.Sprintf("this process's %s namespace changed: %s, then %s", n, l, after.ns[n]))
		}
	}
	tb.Logf("before: %v\nafter:  %v", before, after)
	return out
}

// fdList describes this process's descriptors, for a failure message.
func fdList() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		out = append(out, e.Name()+"->"+l)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}
