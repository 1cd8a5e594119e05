//go:build linux && cgo

package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wsh/jail"
)

// workDir is the working directory of every command the benchmarks run;
// it is writable in the jail (and bound read-write for bubblewrap).
var workDir string

// devNull is where the commands' output goes: a real file, so that no
// path under test copies output through a pipe.
var devNull *os.File

// env is the environment of every command.
var env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "LC_ALL=C"}

// TestMain does what every program that embeds wsh does: the jail is this
// binary re-executed, so jail.Init comes first.
func TestMain(m *testing.M) {
	jail.Init()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	d, err := os.MkdirTemp("", "wsh-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(d)
	if workDir, err = filepath.EvalSymlinks(d); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if devNull, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		// A configuration line of the benchmark format: benchstat puts
		// the runs on a normal host and under the hostile harness in
		// tables of their own.
		fmt.Printf("host: %s\n", hostLabel())
	}
	code := m.Run()
	wshBuild.cleanup()
	benchHome.cleanup()
	return code
}

// benchHome is a home directory for the jail-home paths: in /var/tmp, on
// the host's disk and outside every writable path, so that the jail's
// home is copy-on-write.
var benchHome built

// homeEnv returns env with HOME set to benchHome.
func homeEnv(tb testing.TB) []string {
	tb.Helper()
	benchHome.once.Do(func() {
		benchHome.dir, benchHome.err = os.MkdirTemp("/var/tmp", "wsh-bench-home-")
		benchHome.path = benchHome.dir
	})
	if benchHome.err != nil {
		tb.Fatal(benchHome.err)
	}
	return append(append([]string(nil), env...), "HOME="+benchHome.path)
}

// hostLabel names the host the benchmarks run on: BENCH_HOST when set
// (internal/bench/run.sh sets hostile-mode1 under the harness), otherwise whether a
// seccomp filter is in force.
func hostLabel() string {
	if l := os.Getenv("BENCH_HOST"); l != "" {
		return l
	}
	if statusField("self", "Seccomp") != "0" {
		return "seccomp-filtered"
	}
	return "normal"
}

// statusField returns one field of /proc/PID/status, or "" when there is
// none.
func statusField(pid, field string) string {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// wshBuild is the wsh binary, built once: BENCH_WSH_BIN names a prebuilt
// one (internal/bench/run.sh builds it), otherwise it is built into a temporary
// directory.
var wshBuild built

type built struct {
	once sync.Once
	path string
	dir  string // removed at the end, when the build made it
	err  error
}

func (w *built) cleanup() {
	if w.dir != "" {
		os.RemoveAll(w.dir)
	}
}

// wshBin returns the path of the wsh binary.
func wshBin(tb testing.TB) string {
	tb.Helper()
	wshBuild.once.Do(func() {
		if p := os.Getenv("BENCH_WSH_BIN"); p != "" {
			wshBuild.path = p
			return
		}
		d, err := os.MkdirTemp("", "wsh-bench-bin-")
		if err != nil {
			wshBuild.err = err
			return
		}
		wshBuild.dir = d
		p := filepath.Join(d, "wsh")
		out, err := exec.CommandContext(context.Background(), "go", "build", "-o", p, "wsh/cmd/wsh").CombinedOutput()
		if err != nil {
			wshBuild.err = fmt.Errorf("building wsh: %v\n%s", err, out)
			return
		}
		wshBuild.path = p
	})
	if wshBuild.err != nil {
		tb.Fatal(wshBuild.err)
	}
	return wshBuild.path
}

// bwrapPath returns the path of bubblewrap, or skips when it is missing.
func bwrapPath(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("bwrap")
	if err != nil {
		tb.Skip("bubblewrap is not installed: apt-get install -y bubblewrap (make bench does it as root)")
	}
	return p
}

// bwrapArgs is bubblewrap with the confinement the issue names, around
// argv.
func bwrapArgs(argv ...string) []string {
	return append([]string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--bind", workDir, workDir, "--unshare-all", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL"}, argv...)
}
