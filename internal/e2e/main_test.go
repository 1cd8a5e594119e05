//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// wshBin is the wsh binary under test, built once in a directory every uid
// can read, so the unprivileged runs can execute it too.
var wshBin string

// nobody is the unprivileged uid and gid the tests also run as.
const nobody = 65534

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if jailMode != "" && jailMode != "session" && jailMode != "command" {
		fmt.Fprintf(os.Stderr, "E2E_WSH_JAIL=%q: want session or command\n", jailMode)
		return 2
	}
	dir, err := os.MkdirTemp("", "wsh-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wshBin = filepath.Join(dir, "wsh")
	// As make build makes it (static, the cgo-free init embedded): the
	// tests run the artifact as shipped.
	build := exec.Command("sh", "../../scripts/build.sh", wshBin)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building wsh:", err)
		return 1
	}
	defer removeHomes()
	return m.Run()
}

// A user is who runs wsh in a test.
type user struct {
	name string
	uid  int // -1: the test's own
}

var (
	root         = user{"root", -1}
	unprivileged = user{"nobody", nobody}
	users        = []user{root, unprivileged}
)

// result is what one run of wsh gave.
type result struct {
	stdout, stderr string
	status         int
}

// workDir makes a working directory the user owns.
func workDir(t *testing.T, u user) string {
	t.Helper()
	d := t.TempDir()
	if u.uid >= 0 {
		if err := os.Chmod(filepath.Dir(d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// wshCmd builds a command that runs wsh with args as u in dir, with a
// clean environment plus env.
// jailMode is the WSH_JAIL every wsh of the tests gets unless a test sets
// its own: E2E_WSH_JAIL (make test runs the jail's suites with
// E2E_WSH_JAIL=command too), or wsh's default (a session) when unset.
var jailMode = os.Getenv("E2E_WSH_JAIL")

func wshCmd(ctx context.Context, u user, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, wshBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/go/bin", "HOME=" + dir}, env...)
	if jailMode != "" && !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "WSH_JAIL=") }) {
		cmd.Env = append(cmd.Env, "WSH_JAIL="+jailMode)
	}
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	return cmd
}

// runWsh runs `wsh -c script` as u in dir and returns what it gave.
func runWsh(t *testing.T, u user, dir string, env []string, script string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, u, dir, env, "-c", script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if cmd.ProcessState == nil {
		t.Fatalf("wsh did not run: %v", err)
	}
	r.status = cmd.ProcessState.ExitCode()
	return r
}

// mustRun is runWsh that fails the test unless wsh exits 0.
func mustRun(t *testing.T, u user, dir string, env []string, script string) string {
	t.Helper()
	r := runWsh(t, u, dir, env, script)
	if r.status != 0 {
		t.Fatalf("wsh -c %q as %s: status %d\nstdout:\n%s\nstderr:\n%s", script, u.name, r.status, r.stdout, r.stderr)
	}
	return r.stdout
}

// statusField returns the value of one field of a /proc/PID/status text.
func statusField(t *testing.T, status, field string) string {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in status:\n%s", field, status)
	return ""
}

// helperBins are the test programs built once each, into wsh's own 0755
// directory (removed by TestMain), so every uid can run them.
var helperBins struct {
	sync.Mutex
	built map[string]*helperBuild
}

type helperBuild struct {
	once sync.Once
	path string
	err  error
}

// helperBin builds the package pkg (relative to e2e/) as name, with env
// added to the build's environment, once, and returns its path.
func helperBin(t *testing.T, name, pkg string, env ...string) string {
	t.Helper()
	helperBins.Lock()
	if helperBins.built == nil {
		helperBins.built = map[string]*helperBuild{}
	}
	b := helperBins.built[name]
	if b == nil {
		b = &helperBuild{}
		helperBins.built[name] = b
	}
	helperBins.Unlock()
	b.once.Do(func() {
		p := filepath.Join(filepath.Dir(wshBin), name)
		cmd := exec.Command("go", "build", "-o", p, pkg)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building %s: %v\n%s", pkg, err, out)
			return
		}
		b.path = p
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}
