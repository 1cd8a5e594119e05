//go:build linux && cgo

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const helloC = `#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

int main(void) {
	int fd = open("/usr/wsh-e2e-hello", O_CREAT | O_EXCL | O_WRONLY, 0644);
	printf("hello from the jail; /usr: %s\n", fd < 0 ? strerror(errno) : "created");
	return 0;
}
`

const helloMakefile = "hello: hello.c\n\tgcc -O2 -Wall -o $@ hello.c\n"

// TestJailBuildsWithMake builds a C program with the host's make and gcc in
// a working directory the user owns, and runs it: the program itself finds
// /usr read-only, and the binary is on the host afterwards.
func TestJailBuildsWithMake(t *testing.T) {
	fi, err := os.Stat("/usr/bin/make")
	if err != nil {
		t.Fatalf("this test needs make: %v", err)
	}
	if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 {
		t.Fatalf("/usr/bin/make is owned by uid %d; the test is about a root-owned make", uid)
	}
	t.Cleanup(func() { os.Remove("/usr/wsh-e2e-hello") }) // should the jail let it through
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			writeOwned(t, u, filepath.Join(dir, "hello.c"), helloC)
			writeOwned(t, u, filepath.Join(dir, "Makefile"), helloMakefile)
			out := mustJail(t, u, dir, nil, "make && ./hello")
			if !strings.HasSuffix(out, "hello from the jail; /usr: Read-only file system\n") {
				t.Errorf("make && ./hello in the jail:\n%s\nwant it to end with the program's hello and EROFS", out)
			}
			fi, err := os.Stat(filepath.Join(dir, "hello"))
			if err != nil {
				t.Fatalf("the binary built in the jail is not on the host: %v", err)
			}
			if uid := fi.Sys().(*syscall.Stat_t).Uid; int(uid) != max(u.uid, 0) {
				t.Errorf("the binary is owned by uid %d on the host, want %d", uid, max(u.uid, 0))
			}
		})
	}
}

// writeOwned writes a file that u owns.
func writeOwned(t *testing.T, u user, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if u.uid >= 0 {
		if err := os.Chown(path, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
}

// mkdirOwned makes a directory that u owns.
func mkdirOwned(t *testing.T, u user, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if u.uid >= 0 {
		if err := os.Chown(path, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
}
