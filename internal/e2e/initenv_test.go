//go:build linux && cgo

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// preloadC is a library whose constructor appends the pid it runs in, and
// what /proc/self/exe is, to MARK: loaded with LD_PRELOAD, it shows which
// processes the dynamic loader ran it in.
const preloadC = `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void) {
	char exe[256] = "";
	readlink("/proc/self/exe", exe, sizeof exe - 1);
	int fd = open(MARK, O_WRONLY | O_APPEND | O_CREAT, 0666);
	if (fd >= 0) {
		dprintf(fd, "pid=%d exe=%s\n", getpid(), exe);
		close(fd);
	}
}
`

var dynamicWsh struct {
	once sync.Once
	path string
	err  error
}

// dynamicWshBin is wsh built as `go build ./cmd/wsh` builds it: linked
// dynamically, without the embedded init, so that the jail init is wsh
// itself, run by the dynamic loader.
func dynamicWshBin(t *testing.T) string {
	t.Helper()
	dynamicWsh.once.Do(func() {
		p := filepath.Join(filepath.Dir(wshBin), "wsh-dynamic")
		out, err := exec.Command("go", "build", "-o", p, "wsh/cmd/wsh").CombinedOutput()
		if err != nil {
			dynamicWsh.err = err
			t.Logf("%s", out)
			return
		}
		dynamicWsh.path = p
	})
	if dynamicWsh.err != nil {
		t.Fatalf("building a dynamically linked wsh: %v", dynamicWsh.err)
	}
	return dynamicWsh.path
}

// TestInitIgnoresTheCommandsEnvironment: LD_PRELOAD in a command's
// environment runs its library in the command, never in the jail's init
// (PID 1 of the jail), which runs before any setup step with the
// capabilities of the new namespaces. Both for the shipped wsh and for a
// dynamically linked build whose init is wsh itself.
func TestInitIgnoresTheCommandsEnvironment(t *testing.T) {
	if out, err := exec.Command("ldd", dynamicWshBin(t)).CombinedOutput(); err != nil || !strings.Contains(string(out), "libc.so") {
		t.Fatalf("the dynamic build is not dynamically linked: %v\n%s", err, out)
	}
	dir, err := os.MkdirTemp("", "wsh-e2e-preload-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	mark := filepath.Join(dir, "marks")
	so := filepath.Join(dir, "mark.so")
	src := filepath.Join(dir, "mark.c")
	if err := os.WriteFile(src, []byte(preloadC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-O2", `-DMARK="`+mark+`"`, "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	os.Chmod(so, 0o755)
	for _, bin := range []struct{ name, path string }{{"shipped", wshBin}, {"dynamic", dynamicWshBin(t)}} {
		for _, u := range users {
			t.Run(bin.name+"/"+u.name, func(t *testing.T) {
				os.Remove(mark)
				cmd := wshCmd(t.Context(), u, workDir(t, u), jailEnv, "-c", "LD_PRELOAD="+so+" GODEBUG=x GOTRACEBACK=crash /bin/true")
				cmd.Path = bin.path
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("wsh: %v\n%s", err, out)
				}
				b, _ := os.ReadFile(mark)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				for _, l := range lines {
					if strings.HasPrefix(l, "pid=1 ") {
						t.Errorf("the preloaded library ran in the jail's init: %s", l)
					}
				}
				if len(lines) != 1 || !strings.HasSuffix(lines[0], "exe=/usr/bin/true") {
					t.Errorf("the library ran in %q, want once, in the command", lines)
				}
			})
		}
	}
}
