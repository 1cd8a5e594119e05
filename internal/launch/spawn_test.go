//go:build linux && cgo

package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"wsh/degrade"

	"golang.org/x/sys/unix"
)

// spawnSh runs script with /bin/sh through spawn, its descriptors 0 to 4
// being files, and returns its exit status.
func spawnSh(t *testing.T, script string, files [5]*os.File) int {
	t.Helper()
	pid, err := spawn(initExe{path: "/bin/sh"}, []string{"sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, jailAttr(false, files[:]...))
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return ws.ExitStatus()
}

func tempFiles(t *testing.T, n int) []*os.File {
	t.Helper()
	var out []*os.File
	for i := range n {
		f, err := os.Create(filepath.Join(t.TempDir(), fmt.Sprint("f", i)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out = append(out, f)
	}
	return out
}

// TestSpawnDescriptors: the child's descriptors 0 to 4 are the files given,
// in order, also when a source is itself one of 0 to 4 (here the test's own
// stdin, given as the child's 3).
func TestSpawnDescriptors(t *testing.T) {
	f := tempFiles(t, 4)
	files := [5]*os.File{f[0], f[1], f[2], os.Stdin, f[3]}
	script := `for i in 0 1 2 3 4; do readlink /proc/self/fd/$i; done >/proc/self/fd/1`
	if st := spawnSh(t, script, files); st != 0 {
		t.Fatalf("status %d", st)
	}
	got, err := os.ReadFile(f[1].Name())
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := os.Readlink("/proc/self/fd/0")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{f[0].Name(), f[1].Name(), f[2].Name(), stdin, f[3].Name()}, "\n") + "\n"
	if string(got) != want {
		t.Errorf("the child's descriptors 0 to 4:\n%s\nwant:\n%s", got, want)
	}
}

// TestSpawnCredentials reads back from the kernel what the child gets: the
// identity map, setgroups denied, the init's capabilities in its ambient
// set, a session of its own, and fresh namespaces.
func TestSpawnCredentials(t *testing.T) {
	f := tempFiles(t, 5)
	script := `exec >/proc/self/fd/1
cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups
grep -E '^(CapAmb|NoNewPrivs):' /proc/self/status
read -r st </proc/self/stat; set -- $st; echo sid $1 $6
for n in user mnt pid net ipc uts; do echo ns $n $(readlink /proc/self/ns/$n); done`
	if st := spawnSh(t, script, [5]*os.File(f)); st != 0 {
		t.Fatalf("status %d", st)
	}
	b, err := os.ReadFile(f[1].Name())
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 7 {
		t.Fatalf("output:\n%s", out)
	}
	uid, gid := os.Getuid(), os.Getgid()
	for i, want := range []string{fmt.Sprintf("%d %d 1", uid, uid), fmt.Sprintf("%d %d 1", gid, gid), "deny"} {
		if got := fields(lines[i]); got != want {
			t.Errorf("line %d %q, want %q", i, got, want)
		}
	}
	var amb uint64
	for _, c := range initCaps {
		amb |= 1 << c
	}
	if !strings.Contains(out, fmt.Sprintf("CapAmb:\t%016x\n", amb)) {
		t.Errorf("want CapAmb %016x:\n%s", amb, out)
	}
	// /proc here is the host's: pids as the host sees them.
	if f := strings.Fields(lines[5]); len(f) != 3 || f[0] != "sid" || f[1] != f[2] {
		t.Errorf("want the child to lead a session of its own (pid = sid): %q", lines[5])
	}
	for _, n := range []string{"user", "mnt", "pid", "net", "ipc", "uts"} {
		own, err := os.Readlink("/proc/self/ns/" + n)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "ns "+n+" "+own+"\n") {
			t.Errorf("the child shares the %s namespace %s", n, own)
		}
	}
}

// TestSpawnErrors: a step that fails comes back as a SpawnError that names
// it and carries its errno; nothing is started.
func TestSpawnErrors(t *testing.T) {
	f := tempFiles(t, 5)
	_, err := spawn(initExe{path: "/nonexistent/wsh-init"}, []string{"x"}, nil, jailAttr(false, f[:]...))
	var se *SpawnError
	if !errors.As(err, &se) || se.Step != degrade.StartExec || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a missing binary: %v, want a SpawnError at execve with ENOENT", err)
	}
	_, err = spawn(initExe{path: "/bin/true"}, []string{"true"}, []string{"A=b\x00c"}, jailAttr(false, f[:]...))
	if !errors.As(err, &se) || se.Step != degrade.StartArguments || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a NUL in the environment: %v, want EINVAL", err)
	}
}
