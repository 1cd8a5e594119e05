//go:build linux && cgo

package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/confine"
	"wsh/shell"
)

// trueFile is the script of one exec: /bin/true, by its full path so that
// no variant pays a PATH search the others do not.
var trueFile = mustParse("/bin/true")

func mustParse(src string) *syntax.File {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "bench")
	if err != nil {
		panic(err)
	}
	return f
}

// An execPath is one way to run /bin/true. setup prepares it (and skips
// or fails the benchmark when this host cannot have it) and returns the
// function that runs one command.
type execPath struct {
	name  string
	setup func(b *testing.B) func() error
}

// execPaths are the paths BenchmarkExec measures:
//
//	bare              os/exec, nothing else
//	default-handler   mvdan.cc/sh's interp.Runner with DefaultExecHandler
//	opted-out         wsh's Runner with WSH_NO_SANDBOX=1
//	jail              wsh's Runner, the jail in full mode: a session
//	                  (WSH_JAIL=session, the default), each command forked
//	                  in the Runner's one jail
//	jail-command      the same with a jail for each command (WSH_JAIL=command)
//	jail-command-hostnet  a jail for each command with WSH_NETWORK=host:
//	                  no proxy listener in it
//	jail-home         the jail with a real $HOME, copy-on-write
//	jail-home-readonly  the same $HOME, read-only (WSH_HOME=readonly)
//	jail-hostnet      the jail with WSH_NETWORK=host
//	landlock          wsh's Runner after the host refused the jail once:
//	                  the landlock rung of the ladder, a session (its
//	                  zygote forks each command; only under
//	                  `hostile 1 --`; skipped elsewhere)
//	landlock-command  the same with an init for each command
//	                  (WSH_JAIL=command)
//	attempt-per-exec  a new Runner per command, so each pays the refused
//	                  attempt and the step down: what the landlock rung
//	                  would cost without the sticky state (only under
//	                  `hostile 1 --`)
//	bwrap             bubblewrap with the same confinement
var execPaths = []execPath{
	{"bare", func(*testing.B) func() error {
		return func() error {
			cmd := exec.Command("/bin/true")
			cmd.Env, cmd.Dir = env, workDir
			cmd.Stdout, cmd.Stderr = devNull, devNull
			return cmd.Run()
		}
	}},
	{"default-handler", func(b *testing.B) func() error {
		r, err := interp.New(interp.StdIO(nil, devNull, devNull), interp.Dir(workDir), interp.Env(expand.ListEnviron(env...)),
			interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
				return interp.DefaultExecHandler(shell.DefaultKillTimeout)
			}))
		if err != nil {
			b.Fatal(err)
		}
		return runner(r)
	}},
	{"opted-out", func(b *testing.B) func() error {
		r, _ := wshRunner(b, config.Config{NoSandbox: true})
		return runner(r)
	}},
	{"jail", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkNone})
		mustJail(b, r, j)
		return runner(r)
	}},
	{"jail-command", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkNone, Jail: config.JailCommand})
		mustJail(b, r, j)
		return runner(r)
	}},
	{"jail-command-hostnet", func(b *testing.B) func() error {
		// No proxy and no bridge: against jail-command, what the proxy's
		// listener costs a jail of its own.
		r, j := wshRunner(b, config.Config{Network: config.NetworkHost, Jail: config.JailCommand})
		mustJail(b, r, j)
		return runner(r)
	}},
	{"jail-home", func(b *testing.B) func() error {
		r, j := wshRunnerEnv(b, config.Config{Network: config.NetworkNone, Home: config.HomeOverlay}, homeEnv(b))
		mustJail(b, r, j)
		if !j.Home().Overlay {
			b.Fatalf("the jail's home is not copy-on-write: %s", j.Home().Why)
		}
		return runner(r)
	}},
	{"jail-home-readonly", func(b *testing.B) func() error {
		r, j := wshRunnerEnv(b, config.Config{Network: config.NetworkNone, Home: config.HomeReadonly}, homeEnv(b))
		mustJail(b, r, j)
		return runner(r)
	}},
	{"jail-hostnet", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkHost})
		mustJail(b, r, j)
		return runner(r)
	}},
	{"landlock", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkNone})
		mustDegrade(b, r, j)
		if j.Rung() != degrade.RungLandlock || !j.Session() {
			b.Fatalf("the host refused the jail, and the rung in force is %s (session %v), not landlock in a session", j.Rung(), j.Session())
		}
		b.Cleanup(func() {
			if _, ok := j.Degraded(); !ok || j.Rung() != degrade.RungLandlock {
				b.Error("the Runner is no longer on the landlock rung")
			}
		})
		return runner(r)
	}},
	{"landlock-command", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkNone, Jail: config.JailCommand})
		mustDegrade(b, r, j)
		if j.Rung() != degrade.RungLandlock || j.Session() {
			b.Fatalf("the rung in force is %s (session %v), not landlock with an init per command", j.Rung(), j.Session())
		}
		return runner(r)
	}},
	{"attempt-per-exec", func(b *testing.B) func() error {
		r, j := wshRunner(b, config.Config{Network: config.NetworkNone})
		mustDegrade(b, r, j)
		return func() error {
			r, _ := wshRunner(b, config.Config{Network: config.NetworkNone})
			return r.Run(context.Background(), trueFile)
		}
	}},
	{"bwrap", func(b *testing.B) func() error {
		bw := bwrapPath(b)
		args := bwrapArgs("/bin/true")
		return func() error {
			cmd := exec.Command(bw, args...)
			cmd.Env, cmd.Dir = env, workDir
			cmd.Stdout, cmd.Stderr = devNull, devNull
			return cmd.Run()
		}
	}},
}

func findPath(name string) execPath {
	for _, p := range execPaths {
		if p.name == name {
			return p
		}
	}
	panic("no exec path " + name)
}

// BenchmarkExec is the cost of one external command (/bin/true) on each
// path (see execPaths). The sub-benchmarks are named path=NAME so that
// benchstat can put them side by side (benchstat -col /path).
func BenchmarkExec(b *testing.B) {
	for _, p := range execPaths {
		b.Run("path="+p.name, func(b *testing.B) {
			run := p.setup(b)
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// pairs are the comparisons that have a target, measured paired: each
// iteration runs one command on each path, in alternating order, so that
// the load of this shared, noisy machine weighs on both alike.
var pairs = [][2]string{
	{"opted-out", "default-handler"},
	{"jail", "bwrap"},
	{"jail", "bare"},
	{"jail", "jail-command"},
	{"jail-command", "bare"},
	{"jail-command", "jail-command-hostnet"},
	{"bwrap", "bare"},
	{"landlock", "opted-out"},
	// The full jail cannot be made where the landlock rung is measured:
	// landlock/full is landlock-vs-bare (hostile host) over jail-vs-bare
	// (this host), each paired in its own run.
	{"landlock", "bare"},
	{"landlock", "landlock-command"},
	{"landlock-command", "bare"},
	{"jail-home", "jail-home-readonly"},
}

// BenchmarkPair reports, for each pair A-vs-B, the time of one command on
// A and on B (A-ns/op, B-ns/op) and their ratio (A/B). ns/op is the time
// of both.
func BenchmarkPair(b *testing.B) {
	for _, pr := range pairs {
		b.Run("pair="+pr[0]+"-vs-"+pr[1], func(b *testing.B) {
			pairLoop(b, findPath(pr[0]).setup(b), findPath(pr[1]).setup(b), wallTime, "ns/op")
		})
	}
}

// wallTime is what run takes, in ns.
func wallTime(b *testing.B, run func() error) int64 {
	t := time.Now()
	if err := run(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t).Nanoseconds()
}

// pairLoop runs runA and runB once each per iteration, alternating which
// goes first, so that the load of this shared, noisy machine weighs on
// both alike, and reports cost of each per op (A-unit, B-unit) and their
// ratio (A/B).
func pairLoop(b *testing.B, runA, runB func() error, cost func(*testing.B, func() error) int64, unit string) {
	var ca, cb int64
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			ca += cost(b, runA)
			cb += cost(b, runB)
		} else {
			cb += cost(b, runB)
			ca += cost(b, runA)
		}
	}
	b.ReportMetric(float64(ca)/float64(b.N), "A-"+unit)
	b.ReportMetric(float64(cb)/float64(b.N), "B-"+unit)
	b.ReportMetric(float64(ca)/float64(cb), "A/B")
}

func runner(r *interp.Runner) func() error {
	ctx := context.Background()
	return func() error { return r.Run(ctx, trueFile) }
}

// wshRunner is an interp.Runner with what wsh's shell.Runner gives it:
// the Jailer's exec middleware and in-process policy. The one warning of a
// refused jail is discarded.
func wshRunner(tb testing.TB, cfg config.Config) (*interp.Runner, *confine.Jailer) {
	tb.Helper()
	return wshRunnerEnv(tb, cfg, env)
}

// wshRunnerEnv is wshRunner with its own environment.
func wshRunnerEnv(tb testing.TB, cfg config.Config, env []string) (*interp.Runner, *confine.Jailer) {
	tb.Helper()
	j, err := confine.NewJailer(cfg, workDir, env, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { j.Close() })
	r, err := j.NewInterp(env, nil, interp.StdIO(nil, devNull, devNull), interp.Dir(workDir))
	if err != nil {
		tb.Fatal(err)
	}
	return r, j
}

// mustJail runs one command and fails unless it ran in the jail.
func mustJail(b *testing.B, r *interp.Runner, j *confine.Jailer) {
	b.Helper()
	if err := r.Run(context.Background(), trueFile); err != nil {
		b.Fatal(err)
	}
	if v, ok := j.Degraded(); ok {
		b.Fatalf("the host refused the jail: %s", v.Message())
	}
}

// mustDegrade runs one command, which the host must refuse to jail; it
// skips where the host allows the jail.
func mustDegrade(b *testing.B, r *interp.Runner, j *confine.Jailer) {
	b.Helper()
	if err := r.Run(context.Background(), trueFile); err != nil {
		b.Fatal(err)
	}
	if _, ok := j.Degraded(); !ok {
		b.Skip("this host allows the jail; the landlock rung runs under the hostile harness: hostile 1 -- bench.test (see internal/bench/run.sh)")
	}
}

// BenchmarkJailParentHeap is the jail's cost per command when the program
// that runs wsh holds a large heap, as an agent tool embedding the library
// may: heap=N is N MiB allocated and touched before the loop. A start that
// copies the caller's page tables (fork, which os/exec does for a new user
// namespace) grows with N; one that shares them (CLONE_VM|CLONE_VFORK, as
// wrap's spawn does) does not.
func BenchmarkJailParentHeap(b *testing.B) {
	for _, mb := range []int{0, 256} {
		b.Run(fmt.Sprintf("heap=%dMiB", mb), func(b *testing.B) {
			ballast := make([]byte, mb<<20)
			for i := 0; i < len(ballast); i += 4096 {
				ballast[i] = 1
			}
			run := findPath("jail").setup(b)
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			runtime.KeepAlive(ballast)
		})
	}
}
