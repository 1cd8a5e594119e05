//go:build linux && cgo

package jailer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// devices are paths a write to which changes no file: the shell's terminal
// and the harmless devices.
var devices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true, "/dev/tty": true,
}

// stdioNames name the shell's own standard streams.
var stdioNames = map[string]int{"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}

// stdioFD returns the descriptor a path names when it is one of the shell's
// streams (/dev/stdout, /dev/fd/1, /proc/self/fd/1, ...), or -1 for one of
// the devices.
//
// Only the canonical spelling counts: "/tmp/l/../../dev/stdout" is cleaned
// to "/dev/stdout" by the book, but the kernel resolves ".." after the
// symlink l, somewhere else.
func stdioFD(path string) (int, bool) {
	c := filepath.Clean(path)
	if c != path {
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

// realPath resolves path as the kernel would for an open in the jail, one
// component at a time: symlinks are followed (a dangling last one too,
// since O_CREAT creates its target), and ".." applies after them. The last
// component need not exist; a missing directory before it is ENOENT.
// Components the jail shows from the copy-on-write home are looked up
// there; viaHome reports whether any was.
func (p *policy) realPath(path string) (real string, viaHome bool, err error) {
	real, viaHome, err = p.realPathOnce(path)
	if err == errHomeOff {
		// The home turned off on the way: resolve again, on the host.
		real, viaHome, err = p.realPathOnce(path)
	}
	return real, viaHome, err
}

func (p *policy) realPathOnce(path string) (real string, viaHome bool, err error) {
	todo := strings.Split(path, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		rel, inHome := p.home.rel(next)
		viaHome = viaHome || inHome
		link, err := p.isLink(next, rel, inHome)
		switch {
		case errors.Is(err, fs.ErrNotExist) && onlyDots(todo):
			return filepath.Join(next, strings.Join(todo, "/")), viaHome, nil
		case err != nil:
			return "", viaHome, unwrapErrno(err)
		case !link:
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", viaHome, syscall.ELOOP
		}
		target, err := p.readlink(next, rel, inHome)
		if err != nil {
			return "", viaHome, unwrapErrno(err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, viaHome, nil
}

func (p *policy) isLink(path, rel string, inHome bool) (bool, error) {
	if inHome {
		return p.home.isLink(rel)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	return fi.Mode()&fs.ModeSymlink != 0, nil
}

func (p *policy) readlink(path, rel string, inHome bool) (string, error) {
	if inHome {
		return p.home.readlink(rel)
	}
	return os.Readlink(path)
}

func onlyDots(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
