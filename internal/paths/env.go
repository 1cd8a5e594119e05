//go:build linux && cgo

package paths

import (
	"strconv"
	"strings"
	"unicode"
)

// LookupEnv is the value of key in environ, the last one set, and
// whether it is set.
func LookupEnv(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Shown is p as a message shows it: quoted where it holds what a
// terminal would not print as it is (a newline, an escape).
func Shown(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(p)
	}
	return p
}
