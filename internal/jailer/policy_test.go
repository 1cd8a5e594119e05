//go:build linux && cgo

package jailer

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPolicyOpenWrite opens for writing through paths that try to leave the
// writable directory: each must be refused with the errno the jail gives,
// and nothing must appear outside.
func TestPolicyOpenWrite(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	work, _ = filepath.EvalSymlinks(work)
	outside, _ = filepath.EvalSymlinks(outside)
	mustDo(t, os.WriteFile(filepath.Join(outside, "f"), []byte("keep"), 0o644))
	mustDo(t, os.Symlink(filepath.Join(outside, "f"), filepath.Join(work, "abs")))
	mustDo(t, os.Symlink("../"+filepath.Base(outside)+"/f", filepath.Join(work, "rel")))
	mustDo(t, os.Symlink(filepath.Join(outside, "dangling"), filepath.Join(work, "dangling")))
	mustDo(t, os.Symlink(outside, filepath.Join(work, "dir")))
	mustDo(t, os.Symlink(filepath.Join(work, "in"), filepath.Join(work, "inside")))
	p, err := newPolicy([]string{work}, nil)
	mustDo(t, err)
	tests := []struct {
		path string
		want error // nil: allowed
	}{
		{filepath.Join(work, "new"), nil},
		{filepath.Join(work, "inside"), nil}, // an absolute symlink that stays inside
		{filepath.Join(outside, "f"), syscall.EROFS},
		{filepath.Join(outside, "new"), syscall.EROFS},
		{filepath.Join(work, "abs"), syscall.EROFS},
		{filepath.Join(work, "rel"), syscall.EROFS},
		{filepath.Join(work, "dangling"), syscall.EROFS},
		{filepath.Join(work, "dir", "new"), syscall.EROFS},
		{filepath.Join(work, "..", filepath.Base(outside), "new"), syscall.EROFS},
		{"/proc/self/root" + outside + "/new", syscall.EROFS},
		{"/proc/self/cwd/../../../../../.." + outside + "/new", syscall.EROFS},
		{"/dev/fd/../../../.." + outside + "/new", syscall.EROFS}, // /proc/self/fd, /proc/self, /proc, /
		{"/dev/fd/../../etc/new", syscall.ENOENT},                 // /proc/etc
		{filepath.Join(work, "nodir", "new"), syscall.ENOENT},
	}
	for _, tt := range tests {
		f, err := p.openWrite(tt.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if f != nil {
			f.Close()
		}
		if (tt.want == nil) != (err == nil) || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("openWrite(%s) = %v, want %v", tt.path, err, tt.want)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("%d entries outside, want only f", len(ents))
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "keep" {
		t.Errorf("the file outside was changed: %q", b)
	}
}

func TestStdioFD(t *testing.T) {
	for path, want := range map[string]int{
		"/dev/null": -1, "/dev/tty": -1, "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/1": 1, "/proc/self/fd/2": 2,
		"/dev/fd/3": -2, "/proc/self/fd/7": -2, "/dev/fd/../../etc/x": -2, "/dev/sda": -2, "/etc/passwd": -2,
	} {
		fd, ok := stdioFD(path)
		if !ok {
			fd = -2
		}
		if fd != want {
			t.Errorf("stdioFD(%s) = %d, want %d", path, fd, want)
		}
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
