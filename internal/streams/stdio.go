//go:build linux && cgo

package streams

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ThroughPipes gives back a command's standard streams with each one
// that the jail cannot show in place of a pipe of its own: a regular
// file of a /proc or /sys (`wc -l < /proc/cpuinfo`), which an init
// opening it again by its path, in a jail of its own or another, would
// not find to be the same file. wsh copies it then, as it copies what a
// builtin writes: the script's redirection opened it in the jail (the
// file server), and a builtin could read or write it there as well. The
// same file as stdout and stderr stays one stream.
func ThroughPipes(in io.Reader, out, errw io.Writer) (io.Reader, io.Writer, io.Writer) {
	if f, ok := in.(*os.File); ok && kernelFile(f) {
		in = struct{ io.Reader }{f}
	}
	var wrapped io.Writer
	if f, ok := out.(*os.File); ok && kernelFile(f) {
		wrapped = struct{ io.Writer }{f}
		if errw == out {
			errw = wrapped
		}
		out = wrapped
	}
	if f, ok := errw.(*os.File); ok && kernelFile(f) {
		errw = struct{ io.Writer }{f}
	}
	return in, out, errw
}

// kernelFile says whether f is a regular file of a proc or sysfs file
// system.
func kernelFile(f *os.File) bool {
	rc, err := f.SyscallConn() // not Fd, which would make a pipe blocking
	if err != nil {
		return false
	}
	kernel := false
	rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		var fs unix.Statfs_t
		if unix.Fstat(int(fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && unix.Fstatfs(int(fd), &fs) == nil {
			kernel = fs.Type == unix.PROC_SUPER_MAGIC || fs.Type == unix.SYSFS_MAGIC
		}
	})
	return kernel
}
