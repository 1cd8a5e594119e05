//go:build linux && cgo

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wsh/config"
	"wsh/shell"
)

// loopScript runs n external commands with nothing but builtins around
// them; it is valid for wsh and for bash alike.
func loopScript(n int, cmd string) string {
	return fmt.Sprintf("i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done", n, cmd)
}

// jailedRunner is a wsh Runner in the jail's full mode, working in dir,
// with a session (config.JailSession) or a jail per command.
func jailedRunner(tb testing.TB, dir string, mode config.JailMode, out, errw *bytes.Buffer) *shell.Runner {
	tb.Helper()
	// No copy-on-write home: its keeper, a child of this process for a
	// while after the last jail, would count as left behind. (The home
	// is the process's, not Env's.)
	r, err := shell.New(shell.StdIO(nil, out, errw), shell.Dir(dir), shell.Env(env),
		shell.WithConfig(config.Config{Home: config.HomeReadonly, Jail: mode}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// manyExecs runs n jailed execs in one Runner and fails on anything they
// leave behind: descriptors, children (zombies included; a jail init still
// running is a child of this process, which outlives it), mounts,
// namespaces.
func manyExecs(tb testing.TB, n int, mode config.JailMode) {
	var out, errb bytes.Buffer
	r := jailedRunner(tb, workDir, mode, &out, &errb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	// Warm up: the first exec opens what Go keeps for good (the pidfd
	// probe, /dev/null), which is no leak.
	if err := r.Run(ctx, loopScript(3, "/bin/true")); err != nil {
		tb.Fatalf("warm-up: %v\n%s", err, errb.String())
	}
	before := takeSnapshot(tb)
	start := time.Now()
	if err := r.Run(ctx, loopScript(n, "/bin/true")); err != nil {
		tb.Fatalf("%d jailed execs: %v\n%s", n, err, errb.String())
	}
	elapsed := time.Since(start)
	if st := r.Status(); st.Mode != shell.Confined {
		tb.Fatalf("the jail is not in force: %s: %v", st.Mode, st.Cause)
	}
	if errb.Len() > 0 {
		tb.Errorf("stderr: %s", errb.String())
	}
	// While the Runner lives, its session's init is its one child: the
	// commands' processes are reaped inside.
	if mid := takeSnapshot(tb); len(mid.children) > len(before.children) {
		tb.Errorf("%d children after the execs, %d before: %v", len(mid.children), len(before.children), mid.children)
	}
	// Once it is closed, nothing is left.
	if err := r.Close(); err != nil {
		tb.Error(err)
	}
	for _, l := range leaks(tb, before) {
		tb.Error(l)
	}
	tb.Logf("%d jailed execs in %v (%v each)", n, elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond))
}

// jailModes are both values of WSH_JAIL.
var jailModes = []config.JailMode{config.JailSession, config.JailCommand}

// TestScale is the short variant: 300 jailed execs in one Runner leave
// nothing behind, in a session and with a jail per command.
// BenchmarkScale is the long one.
func TestScale(t *testing.T) {
	for _, mode := range jailModes {
		t.Run(string(mode), func(t *testing.T) { manyExecs(t, 300, mode) })
	}
}

// BenchmarkScale runs 10,000 jailed execs in one Runner per iteration, in
// each mode, and fails on anything they leave behind. Run it with
// -benchtime=1x.
func BenchmarkScale(b *testing.B) {
	const n = 10000
	for _, mode := range jailModes {
		b.Run(string(mode), func(b *testing.B) {
			for b.Loop() {
				manyExecs(b, n, mode)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/exec")
		})
	}
}

// concurrentScript runs pipelines and background jobs; every command in it
// is external, so every one runs in a jail of its own. tag tells the
// Runners apart.
func concurrentScript(tag string) (script, want string) {
	script = `
cat /proc/self/status | grep '^Seccomp:' | cut -f2
echo hello-` + tag + ` | tr a-z A-Z | rev
echo x-` + tag + ` > a & echo y-` + tag + ` > b & wait
cat a b
for i in 1 2 3 4 5 6 7 8; do sh -c "echo job$i-` + tag + `" > out$i & done
wait
cat out1 out2 out3 out4 out5 out6 out7 out8 | sort | tr '\n' ' '
echo
`
	var jobs []string
	for i := 1; i <= 8; i++ {
		jobs = append(jobs, fmt.Sprintf("job%d-%s", i, tag))
	}
	// `sort` in the C locale: the tags are the same, the digits sort.
	want = "2\n" + reverse(strings.ToUpper("hello-"+tag)) + "\n" +
		"x-" + tag + "\ny-" + tag + "\n" + strings.Join(jobs, " ") + " \n"
	return script, want
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestConcurrentPipelines runs 8 Runners at a time, each with pipelines
// (a | b | c) and background jobs (x & y & wait), all jailed: every one
// gives the right output, in the jail (Seccomp: 2 read back by cat), and
// nothing is left behind once they are closed; in sessions and with a
// jail per command.
func TestConcurrentPipelines(t *testing.T) {
	for _, mode := range jailModes {
		t.Run(string(mode), func(t *testing.T) { concurrentPipelines(t, mode) })
	}
}

func concurrentPipelines(t *testing.T, mode config.JailMode) {
	const runners, rounds = 8, 3
	// Warm up, as manyExecs does: the first Runner of the process makes
	// what is kept for good (the sealed copy of the init, /dev/null).
	var wout, werr bytes.Buffer
	warm := jailedRunner(t, workDir, mode, &wout, &werr)
	if err := warm.Run(context.Background(), loopScript(1, "/bin/true")); err != nil {
		t.Fatalf("warm-up: %v\n%s", err, werr.String())
	}
	warm.Close()
	before := takeSnapshot(t)
	var wg sync.WaitGroup
	errs := make(chan error, runners*rounds)
	for g := range runners {
		dir := filepath.Join(workDir, fmt.Sprintf("runner%d-%s", g, mode))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			var out, errb bytes.Buffer
			r := jailedRunner(t, dir, mode, &out, &errb)
			defer r.Close()
			for round := range rounds {
				out.Reset()
				errb.Reset()
				tag := fmt.Sprintf("r%dn%d", g, round)
				script, want := concurrentScript(tag)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				err := r.Run(ctx, script)
				cancel()
				switch {
				case err != nil:
					errs <- fmt.Errorf("runner %d round %d: %v\nstderr:\n%s", g, round, err, errb.String())
				case out.String() != want:
					errs <- fmt.Errorf("runner %d round %d: output\n%s\nwant\n%s\nstderr:\n%s", g, round, out.String(), want, errb.String())
				}
				if st := r.Status(); st.Mode != shell.Confined {
					errs <- fmt.Errorf("runner %d: the jail is not in force: %s: %v", g, st.Mode, st.Cause)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, l := range leaks(t, before) {
		t.Error(l)
	}
}
