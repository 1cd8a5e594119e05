//go:build linux && cgo

package streams

import "testing"

func TestStdioFD(t *testing.T) {
	for path, want := range map[string]int{
		"/dev/null": -1, "/dev/tty": -1, "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/1": 1, "/proc/self/fd/2": 2,
		"/dev/fd/3": -2, "/proc/self/fd/7": -2, "/dev/fd/../../etc/x": -2, "/dev/sda": -2, "/etc/passwd": -2,
		// The same names to the kernel: "//" and "/./"; ".." after a symlink is not.
		"/dev//stdout": 1, "/dev/fd/./1": 1, "/proc/self//fd/0": 0, "/dev/fd/../fd/1": -2,
	} {
		fd, ok := StdioFD(path)
		if !ok {
			fd = -2
		}
		if fd != want {
			t.Errorf("StdioFD(%s) = %d, want %d", path, fd, want)
		}
	}
}
