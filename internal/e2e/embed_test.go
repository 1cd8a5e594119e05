//go:build linux && cgo

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func embedBin(t *testing.T) string {
	return helperBin(t, "embed", "./testdata/embed")
}

// TestEmbedderWithoutStdin: an embedding program that closed its
// descriptor 0 before making a Runner still gets the jail. (The init's
// binary was exec'd by a /proc/self/fd/N path; with N at most 4 the
// descriptors put in place for the init replaced it, and the command's
// stdin ran as the init, unconfined.)
func TestEmbedderWithoutStdin(t *testing.T) {
	dir := workDir(t, root)
	cmd := exec.Command(embedBin(t), "-close-stdin", "grep -E '^(Seccomp|CapEff):' /proc/self/status < /bin/sh")
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, jailEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("embed -close-stdin: %v\n%s", err, out)
	}
	if statusField(t, string(out), "Seccomp") != "2" || statusField(t, string(out), "CapEff") != "0000000000000000" {
		t.Errorf("the command did not run in the jail:\n%s", out)
	}
}

// TestInitInheritsNoDescriptors reads /proc/PID/fd of a running jail init
// from the host: a descriptor that wsh inherited open across exec (here 7,
// from the shell that started it) does not reach the init, only the five
// it is given (and what it opens itself).
func TestInitInheritsNoDescriptors(t *testing.T) {
	dir := workDir(t, root)
	marker := filepath.Join(dir, "inherited-marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, root, dir, jailEnv)
	cmd.Path = "/bin/sh"
	cmd.Args = []string{"sh", "-c", `exec 7<"$1"; exec "$0" -c '/bin/sleep 30'`, wshBin, marker}
	init := startSleepingJail(t, cmd)
	// wsh itself has it: the check can see it.
	if !holds(t, cmd.Process.Pid, marker) {
		t.Fatalf("wsh does not hold %s: the test is broken", marker)
	}
	if holds(t, init, marker) {
		t.Errorf("the jail init holds %s, which wsh inherited", marker)
	}
}

// holds reports whether process pid has a descriptor open on path.
func holds(t *testing.T, pid int, path string) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + e.Name()); l == path {
			return true
		}
	}
	return false
}

// TestEmbedderWithoutInit: a program that forgot jail.Init gets an error
// naming it at once from shell.New, and never a jail: re-executed as an
// init, it would run its own main again, nested, level after level.
func TestEmbedderWithoutInit(t *testing.T) {
	dir := workDir(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, helperBin(t, "noinit", "./testdata/noinit"), "/bin/true")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "jail.Init() was not called") {
		t.Errorf("noinit: %v after %v\n%s", err, took, out)
	}
	if took > 2*time.Second {
		t.Errorf("the error took %v", took)
	}
}
