//go:build linux && cgo

package watch

import (
	"io"
	"sync"

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
