//go:build linux && cgo

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wsh/config"
	"wsh/internal/confine"
)

// A cpuCounter reads the CPU time (user and system, in ns) of every
// process in a cgroup this benchmark moved itself into: its children, a
// jail's PID 1 and what runs in it, bubblewrap's outer process and the
// PID 1 it does not reap, are all counted, reaped or not (getrusage of
// reaped children is not).
type cpuCounter struct {
	usage string // the cgroup's cpuacct.usage (v1) or cpu.stat (v2)
	v2    bool
}

// newCPUCounter makes a cgroup for this process and moves it there until
// the benchmark ends.
func newCPUCounter(b *testing.B) *cpuCounter {
	b.Helper()
	if os.Getuid() != 0 {
		b.Skip("counting CPU time with a cgroup needs root: run make bench as root")
	}
	var dir, procs, usage, back string
	v2 := false
	switch {
	case exists("/sys/fs/cgroup/cpuacct/cpuacct.usage"):
		dir = filepath.Join("/sys/fs/cgroup/cpuacct", fmt.Sprintf("wsh-bench-%d", os.Getpid()))
		procs, usage, back = filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cpuacct.usage"), "/sys/fs/cgroup/cpuacct/cgroup.procs"
	case exists("/sys/fs/cgroup/cgroup.controllers"):
		v2 = true
		dir = filepath.Join("/sys/fs/cgroup", fmt.Sprintf("wsh-bench-%d", os.Getpid()))
		procs, usage, back = filepath.Join(dir, "cgroup.procs"), filepath.Join(dir, "cpu.stat"), "/sys/fs/cgroup/cgroup.procs"
	default:
		b.Fatal("no cpuacct cgroup (v1) and no cgroup v2 at /sys/fs/cgroup")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(procs, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		os.Remove(dir)
		b.Fatal(err)
	}
	b.Cleanup(func() {
		os.WriteFile(back, []byte(strconv.Itoa(os.Getpid())), 0)
		// Children still in it (a Runner's session, closed by a later
		// cleanup) keep it busy: retry for a while.
		for end := time.Now().Add(5 * time.Second); os.Remove(dir) != nil && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return &cpuCounter{usage: usage, v2: v2}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// now is the cgroup's CPU time so far, in ns.
func (c *cpuCounter) now(b *testing.B) int64 {
	data, err := os.ReadFile(c.usage)
	if err != nil {
		b.Fatal(err)
	}
	if !c.v2 {
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n * 1000
		}
	}
	b.Fatalf("no usage_usec in %s", c.usage)
	return 0
}

// cpuPairs are the comparisons of CPU time per exec, with a target
// (docs/performance.md): the session's jailed exec against bubblewrap's,
// against a jail per command, and against a bare exec.
var cpuPairs = [][2]string{
	{"jail", "bwrap"},
	{"jail", "jail-command"},
	{"jail", "bare"},
	{"jail-command", "bwrap"},
}

// BenchmarkCPU reports, for each pair A-vs-B, the CPU time (user and
// system, of the whole process tree, counted by a cgroup) of one command
// on A and on B (A-cpu-ns/op, B-cpu-ns/op) and their ratio (A/B), the two
// alternating as in BenchmarkPair. The benchmark's own process is in the
// cgroup too: what wsh's shell does for a command is its cost.
func BenchmarkCPU(b *testing.B) {
	cpu := newCPUCounter(b)
	cpuTime := func(b *testing.B, run func() error) int64 {
		t := cpu.now(b)
		if err := run(); err != nil {
			b.Fatal(err)
		}
		return cpu.now(b) - t
	}
	for _, pr := range cpuPairs {
		b.Run("pair="+pr[0]+"-vs-"+pr[1], func(b *testing.B) {
			pairLoop(b, findPath(pr[0]).setup(b), findPath(pr[1]).setup(b), cpuTime, "cpu-ns/op")
		})
	}
}

// BenchmarkFirstCommand is what a Runner costs up to the end of its first
// command: the Jailer (its probe of the host, which in a session is the
// session's jail), one /bin/true and the Close, a session against a jail
// per command; and the start alone (the Jailer made and closed, no
// command), where a session's jail is against the one jail a per-command
// Jailer makes to probe the host. All paired.
func BenchmarkFirstCommand(b *testing.B) {
	first := func(mode config.JailMode, cmds int) func(*testing.B) func() error {
		return func(*testing.B) func() error {
			return func() error {
				j, err := confine.NewJailer(config.Config{Jail: mode, Home: config.HomeReadonly}, workDir, env, nil)
				if err != nil {
					return err
				}
				defer j.Close()
				if v, failed := j.StartFailure(); failed {
					return fmt.Errorf("no jail: %s", v.Message())
				}
				if cmds == 0 {
					return nil
				}
				r, err := j.NewInterp(env, nil)
				if err != nil {
					return err
				}
				r.Dir = workDir
				return r.Run(context.Background(), trueFile)
			}
		}
	}
	paths := map[string]func(*testing.B) func() error{
		"session":       first(config.JailSession, 1),
		"command":       first(config.JailCommand, 1),
		"start-session": first(config.JailSession, 0),
		"start-command": first(config.JailCommand, 0),
	}
	for _, pr := range [][2]string{{"session", "command"}, {"start-session", "start-command"}} {
		b.Run("pair="+pr[0]+"-vs-"+pr[1], func(b *testing.B) {
			pairLoop(b, paths[pr[0]](b), paths[pr[1]](b), wallTime, "ns/op")
		})
	}
}

// BenchmarkWshC is `wsh -c :` (no external command: the probe of the
// host, which in a session is the session's jail, and the end), against
// `bash -c :`, paired, in each WSH_JAIL mode. The binary is make build's
// (BENCH_WSH_BIN, set by internal/bench/run.sh).
func BenchmarkWshC(b *testing.B) {
	wsh := os.Getenv("BENCH_WSH_BIN")
	if wsh == "" {
		b.Skip("BENCH_WSH_BIN is not set: run make bench")
	}
	cmdOf := func(bin string, extra ...string) func() error {
		return func() error {
			c := exec.Command(bin, "-c", ":")
			c.Env, c.Dir = append(append([]string(nil), env...), extra...), workDir
			c.Stdout, c.Stderr = devNull, devNull
			return c.Run()
		}
	}
	runs := map[string]func() error{
		"wsh-session": cmdOf(wsh, "WSH_JAIL=session"),
		"wsh-command": cmdOf(wsh, "WSH_JAIL=command"),
		"bash":        cmdOf("bash"),
	}
	for _, pr := range [][2]string{{"wsh-session", "bash"}, {"wsh-session", "wsh-command"}} {
		b.Run("pair="+pr[0]+"-vs-"+pr[1], func(b *testing.B) {
			pairLoop(b, runs[pr[0]], runs[pr[1]], wallTime, "ns/op")
		})
	}
}

// renameLoop renames a file 10,000 times (5,000 pairs) in python3: on the
// full rung every rename goes to wsh (the git config group), which lets it
// through.
const renameLoop = `import os
open("bench-rename-a", "w").close()
for i in range(5000):
    os.rename("bench-rename-a", "bench-rename-b")
    os.rename("bench-rename-b", "bench-rename-a")
os.unlink("bench-rename-a")`

// BenchmarkRenames is renameLoop under `wsh -c` (a session) against the
// same under `bash -c`, paired: the cost of wsh's answer to each rename,
// beside the jail's own start.
func BenchmarkRenames(b *testing.B) {
	wsh := os.Getenv("BENCH_WSH_BIN")
	if wsh == "" {
		b.Skip("BENCH_WSH_BIN is not set: run make bench")
	}
	cmdOf := func(bin string, extra ...string) func() error {
		return func() error {
			c := exec.Command(bin, "-c", `python3 -c "$BENCH_PY"`)
			c.Env, c.Dir = append(append([]string(nil), env...), append(extra, "BENCH_PY="+renameLoop)...), workDir
			c.Stdout, c.Stderr = devNull, devNull
			return c.Run()
		}
	}
	b.Run("pair=wsh-session-vs-bash", func(b *testing.B) {
		pairLoop(b, cmdOf(wsh, "WSH_JAIL=session"), cmdOf("bash"), wallTime, "ns/op")
	})
}
