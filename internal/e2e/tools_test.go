//go:build linux && cgo

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A toolCheck is a real tool run in the jail, and what it must print.
type toolCheck struct {
	bin    string // looked up on the host first: not installed is logged
	script string
	want   func(out string) bool
}

var toolChecks = []toolCheck{
	{"go", "go version", prefix("go version go1.")},
	{"python3", `python3 -c 'import sys; print(6*7, sys.version_info[0])'`, equal("42 3\n")},
	{"node", `node -e 'console.log(6*7)'`, equal("42\n")},
	{"git", "git init -q && echo hi > f && git add f && " +
		"git -c user.name=wsh -c user.email=wsh@example.invalid commit -q -m first && " +
		"git log --format=%s", equal("first\n")},
	// libuv (node) tries io_uring for file operations when asked to, gets
	// EPERM from the filter, and falls back to its thread pool: the read
	// works, and strace (ptrace is allowed in the jail) shows the refusal.
	{"strace", `UV_USE_IO_URING=1 strace -f -qq -e trace=io_uring_setup -o trace node -e ` +
		`'require("fs").promises.readFile("/etc/hostname").then(b => console.log("read", b.length > 0))' && ` +
		`grep -c 'io_uring_setup(.*= -1 EPERM' trace && ! grep -v 'EPERM' trace`, nodeFellBack},
}

func prefix(p string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, p) }
}
func equal(w string) func(string) bool { return func(s string) bool { return s == w } }

// nodeFellBack: node read the file, and every io_uring_setup it tried
// (one or more) was refused.
func nodeFellBack(out string) bool {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return len(lines) == 2 && lines[0] == "read true" && lines[1] != "0"
}

// TestToolsInJail runs the tools agents use in the jail, as root and as an
// unprivileged uid. A tool installed on the host must work in the jail.
func TestToolsInJail(t *testing.T) {
	path := wshCmd(t.Context(), root, "/", nil).Env[0]
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			for _, c := range toolChecks {
				if _, err := lookPath(path, c.bin); err != nil {
					t.Logf("%s is not installed on this host (%v): not run", c.bin, err)
					continue
				}
				dir := workDir(t, u)
				if out := mustJail(t, u, dir, nil, c.script); !c.want(out) {
					t.Errorf("%s in the jail printed %q", c.script, out)
				}
			}
		})
	}
}

// TestToolsGitCommitIsOnTheHost checks from the host that the commit made
// in the jail is in the working directory's repository.
func TestToolsGitCommitIsOnTheHost(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			mustJail(t, u, dir, nil, toolChecks[3].script)
			out, err := exec.Command("git", "-C", dir, "-c", "safe.directory=*", "log", "--format=%an %s").Output()
			if err != nil || string(out) != "wsh first\n" {
				t.Errorf("git log on the host: %q, %v; want the jail's commit", out, err)
			}
		})
	}
}

// lookPath finds bin in the PATH the tests give wsh (PATH=...).
func lookPath(pathEnv, bin string) (string, error) {
	for _, d := range filepath.SplitList(strings.TrimPrefix(pathEnv, "PATH=")) {
		p := filepath.Join(d, bin)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
