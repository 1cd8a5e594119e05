//go:build linux && cgo

package paths

import (
	"errors"
	"strings"
	"syscall"
)

// lookupEnvOK is the value of key in environ, the last one set, as
// package jailer's of the same name.
func lookupEnvOK(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// unwrapErrno is the errno err wraps, or err, as package jailer's of the
// same name.
func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
