//go:build linux && cgo

package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestShippedInitIsEmbedded: every jail init of the wsh that make build
// makes runs from the embedded cgo-free init, not from a copy of wsh. The
// kernel says so from outside: /proc/PID/exe of the init of a running
// command, and the size of that file.
func TestShippedInitIsEmbedded(t *testing.T) {
	out, err := exec.Command(wshBin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^jail init: embedded, without cgo \((\d+) bytes\)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("wsh version does not name an embedded init:\n%s", out)
	}
	size, _ := strconv.ParseInt(string(m[1]), 10, 64)

	dir := workDir(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, root, dir, nil, "-c", "/bin/sleep 30")
	init := startSleepingJail(t, cmd)
	exe, err := os.Readlink("/proc/" + strconv.Itoa(init) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if exe != "/memfd:wsh-jail-init (deleted)" {
		t.Errorf("the jail init runs from %q, want the embedded init (/memfd:wsh-jail-init)", exe)
	}
	st, err := os.Stat("/proc/" + strconv.Itoa(init) + "/exe")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size {
		t.Errorf("the init's binary has %d bytes; wsh version says the embedded one has %d", st.Size(), size)
	}
	if self, err := os.Stat(wshBin); err == nil && st.Size() >= self.Size() {
		t.Errorf("the init's binary (%d bytes) is not smaller than wsh (%d bytes)", st.Size(), self.Size())
	}
}

// startSleepingJail starts cmd, a wsh whose script runs /bin/sleep, and
// returns the host pid of the jail init that runs it; the test kills wsh
// when it ends.
func startSleepingJail(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if init := childWithArg0(t, cmd.Process.Pid, "wsh-jail-init", "/bin/sleep"); init != 0 {
			return init
		}
	}
	t.Fatal("no jail init running /bin/sleep appeared under wsh")
	return 0
}

// childWithArg0 returns a child of pid whose argv[0] is arg0 and that has
// a child of its own running target, or 0.
func childWithArg0(t *testing.T, pid int, arg0, target string) int {
	t.Helper()
	for _, c := range childrenOfPid(pid) {
		if argv0(c) != arg0 {
			continue
		}
		for _, gc := range childrenOfPid(c) {
			if argv0(gc) == target {
				return c
			}
		}
	}
	return 0
}

// childrenOfPid reads the children of every thread of pid.
func childrenOfPid(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func argv0(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	a, _, _ := strings.Cut(string(b), "\x00")
	return a
}

// TestUncheckedEmbeddedInitRefused: a wsh built with -tags wshinit but not
// by scripts/build.sh (so with whatever internal/launch/initbin holds, perhaps from an
// older tree) refuses to use its init: every command fails loudly and says
// how to build it, rather than running jails with unchecked code.
func TestUncheckedEmbeddedInitRefused(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "wsh-by-hand")
	build := exec.Command("go", "build", "-tags", "wshinit", "-o", bin, "../../cmd/wsh")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags wshinit: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-c", "/bin/true")
	cmd.Dir = workDir(t, root)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(string(out), "scripts/build.sh") {
		t.Errorf("wsh built by hand with the tag: %v\n%s\nwant exit 126 and a message naming scripts/build.sh", err, out)
	}
}

// TestVersionNamesTheCommit: the shipped wsh says which commit it was
// built from, as git says the tree's HEAD is.
func TestVersionNamesTheCommit(t *testing.T) {
	out, err := exec.Command(wshBin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	want := "wsh 0.1.0-dev+" + strings.TrimSpace(string(head))[:12]
	if first, _, _ := strings.Cut(string(out), "\n"); strings.TrimSuffix(first, "-dirty") != want {
		t.Errorf("wsh version says %q, want %q (or with -dirty)", first, want)
	}
}
