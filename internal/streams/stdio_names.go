//go:build linux && cgo

package streams

import (
	"path/filepath"
	"slices"
	"strings"
)

// devices are paths a write to which changes no file: the shell's terminal
// and the harmless devices.
var devices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true, "/dev/tty": true,
}

// stdioNames name the shell's own standard streams.
var stdioNames = map[string]int{"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}

// StdioFD returns the descriptor a path names when it is one of the shell's
// streams (/dev/stdout, /dev/fd/1, /proc/self/fd/1, ...), or -1 for one of
// the devices.
//
// Only the canonical spelling counts: "/tmp/l/../../dev/stdout" is cleaned
// to "/dev/stdout" by the book, but the kernel resolves ".." after the
// symlink l, somewhere else.
func StdioFD(path string) (int, bool) {
	c := filepath.Clean(path)
	if c != path && slices.Contains(strings.Split(path, "/"), "..") {
		// "//" and "/./" are the same name to the kernel; ".." after
		// a symlink is not.
		return 0, false
	}
	if devices[c] {
		return -1, true
	}
	if fd, ok := stdioNames[c]; ok {
		return fd, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(c, dir); ok && (n == "0" || n == "1" || n == "2") {
			return int(n[0] - '0'), true
		}
	}
	return 0, false
}
