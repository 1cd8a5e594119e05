//go:build linux && cgo

package watch

import (
	"fmt"
	"path/filepath"

	"wsh/internal/gitmediate"
	"wsh/internal/paths"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Bound notes the stamps of paths just bound read-only in the live
// session's jail (session.Sessions.ProtectInPlace), to be compared after every command of
// the session and at the Runner's Close (CheckBound). The bind keeps a
// path from being opened for writing from then on, but not a process
// that held it open, or worked in it, from before: its descriptor, or its
// working directory, is on the writable mount still, and what it writes
// lands on the host. wsh cannot stop it; it says so.
func (w *Watch) Bound(paths []proto.PathID) {
	stamps := make(map[string]string, len(paths))
	for _, id := range paths {
		stamps[id.Path] = protect.Stamp(id.Path)
	}
	w.mu.Lock()
	if w.bound == nil {
		w.bound = map[string]string{}
	}
	for p, s := range stamps {
		if _, ok := w.bound[p]; !ok {
			w.bound[p] = s
		}
	}
	w.mu.Unlock()
	// Written between the protection that found it (NoteConfigs) and
	// the stamp: said as written before the bind.
	for p := range stamps {
		if gitmediate.ConfigName(filepath.Base(p)) {
			w.sayConfigKeys(p, "made during the run before wsh could make it read-only")
		}
	}
}

// CheckBound says each path bound read-only during the run that changed
// since its bind (Bound), naming a hook written there; of a git
// config, the keys the host's git would run or load. Each change is said
// once for each state it leaves the path in.
func (w *Watch) CheckBound() {
	w.mu.Lock()
	if len(w.bound) == 0 {
		w.mu.Unlock()
		return // the common case: every command pays this look
	}
	bound := make(map[string]string, len(w.bound))
	for p, s := range w.bound {
		bound[p] = s
	}
	w.mu.Unlock()
	for p, before := range bound {
		now := protect.Stamp(p)
		switch {
		case now == before:
			continue
		case before == protect.StampTooLarge || now == protect.StampTooLarge:
			if _, said := w.said.LoadOrStore("large:"+p, true); !said {
				fmt.Fprintf(w.warn, "wsh: cannot tell whether a process changed %s, a protected path with more than %d entries, after wsh made it read-only during the run: check it before a program on the host reads it\n", paths.Shown(p), protect.MaxStamped)
			}
			continue
		}
		if gitmediate.ConfigName(filepath.Base(p)) {
			// wsh itself writes a protected config for git (git remote
			// add): what it lets through is no change to say, a key that
			// runs code is, whoever wrote it.
			w.sayConfigKeys(p, "written after wsh made it read-only")
			continue
		}
		if _, said := w.said.LoadOrStore("changed:"+p+"\x00"+now, true); !said {
			fmt.Fprintf(w.warn, "wsh: %s was changed after wsh made it read-only during the run (a process that held it open, or worked in it, from before still can write it): check it before a program on the host reads it\n", paths.Shown(p))
		}
		w.sayHooks(p, true)
	}
}
