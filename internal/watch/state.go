//go:build linux && cgo

package watch

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode"

	"wsh/degrade"
	"wsh/internal/protect"
)

// A Watch says what the commands of a Jailer did to the protected paths
// that their jails could not keep them from, each thing once.
type Watch struct {
	warn io.Writer
	rung func() degrade.Rung
	said sync.Map // what was said once, by key (Once)
	// configs are the git configs protected so far, by path and
	// identity (NoteConfigs); nil until the first protection is taken.
	configsMu   sync.Mutex
	configs     map[configSeen]bool
	mu          sync.Mutex
	watching    map[*protect.Protection]bool   // the protection of each command running
	shellWrites map[string]*protect.Protection // ShellWrite
	// bound are the stamps of the paths bound read-only in a live
	// session, taken at the bind (Bound).
	bound map[string]string
}

// New returns a Watch that says what it finds on warn; rung is the rung
// the commands get, named in what is said.
func New(warn io.Writer, rung func() degrade.Rung) *Watch {
	return &Watch{warn: warn, rung: rung}
}

// Once reports whether key is new, noting it: what is said once is said
// where Once(its key) is true.
func (w *Watch) Once(key string) bool {
	_, said := w.said.LoadOrStore(key, true)
	return !said
}

// shown is p as a message shows it: quoted where it holds what a terminal
// would not print as it is (a newline, an escape).
func shown(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(p)
	}
	return p
}

// unwrapErrno is the errno err wraps, or err.
func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
