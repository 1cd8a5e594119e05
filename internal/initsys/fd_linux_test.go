package initsys

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenNoSymlinks: the reopen of a stream, and a session's working
// directory, follow no symlink on the way, so no magic link either: a
// component swapped for a symlink to /proc/self/fd/N (the init's own
// descriptor of the shell's view) is ELOOP, not the host's file. (The
// swap races with the init's readlink; this is the open it races with.)
func TestOpenNoSymlinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "x", "f"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := OpenNoSymlinks(filepath.Join(dir, "a", "x", "f"), unix.O_RDONLY)
	if err != nil {
		t.Fatalf("a plain path: %v", err)
	}
	unix.Close(fd)
	if fd, err := OpenNoSymlinks("/", unix.O_RDONLY|unix.O_DIRECTORY); err != nil {
		t.Errorf("/: %v", err)
	} else {
		unix.Close(fd)
	}
	held, err := os.Open(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for name, target := range map[string]string{
		"symlink":    filepath.Join(dir, "a"),
		"magic link": "/proc/self/fd/" + strconv.Itoa(int(held.Fd())),
	} {
		link := filepath.Join(dir, "link-"+name[:1])
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(link, "x", "f"), filepath.Join(link, "x"), link} {
			fd, err := OpenNoSymlinks(p, unix.O_RDONLY)
			if err == nil {
				unix.Close(fd)
			}
			if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
				t.Errorf("%s: %s: %v, want ELOOP", name, p, err)
			}
		}
	}
	for _, p := range []string{"relative", dir + "/a/../a/x/f", dir + "/./a"} {
		if fd, err := OpenNoSymlinks(p, unix.O_RDONLY); err == nil {
			unix.Close(fd)
			t.Errorf("%s was opened", p)
		}
	}
}
