//go:build linux && cgo

package jailer

import (
	"fmt"
	"path/filepath"

	"wsh/internal/gitmediate"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// watchBound notes the stamps of paths just bound read-only in the live
// session's jail (session.Sessions.ProtectInPlace), to be compared after every command of
// the session and at the Runner's Close (checkBound). The bind keeps a
// path from being opened for writing from then on, but not a process
// that held it open, or worked in it, from before: its descriptor, or its
// working directory, is on the writable mount still, and what it writes
// lands on the host. wsh cannot stop it; it says so.
func (j *Jailer) watchBound(paths []proto.PathID) {
	stamps := make(map[string]string, len(paths))
	for _, id := range paths {
		stamps[id.Path] = protect.Stamp(id.Path)
	}
	j.watchMu.Lock()
	if j.bound == nil {
		j.bound = map[string]string{}
	}
	for p, s := range stamps {
		if _, ok := j.bound[p]; !ok {
			j.bound[p] = s
		}
	}
	j.watchMu.Unlock()
	// Written between the protection that found it (noteConfigs) and
	// the stamp: said as written before the bind.
	for p := range stamps {
		if gitmediate.ConfigName(filepath.Base(p)) {
			j.sayConfigKeys(p, "made during the run before wsh could make it read-only")
		}
	}
}

// checkBound says each path bound read-only during the run that changed
// since its bind (watchBound), naming a hook written there; of a git
// config, the keys the host's git would run or load. Each change is said
// once for each state it leaves the path in.
func (j *Jailer) checkBound() {
	j.watchMu.Lock()
	if len(j.bound) == 0 {
		j.watchMu.Unlock()
		return // the common case: every command pays this look
	}
	bound := make(map[string]string, len(j.bound))
	for p, s := range j.bound {
		bound[p] = s
	}
	j.watchMu.Unlock()
	for p, before := range bound {
		now := protect.Stamp(p)
		switch {
		case now == before:
			continue
		case before == protect.StampTooLarge || now == protect.StampTooLarge:
			if _, said := j.madeSaid.LoadOrStore("large:"+p, true); !said {
				fmt.Fprintf(j.warn, "wsh: cannot tell whether a process changed %s, a protected path with more than %d entries, after wsh made it read-only during the run: check it before a program on the host reads it\n", shown(p), protect.MaxStamped)
			}
			continue
		}
		if gitmediate.ConfigName(filepath.Base(p)) {
			// wsh itself writes a protected config for git (git remote
			// add): what it lets through is no change to say, a key that
			// runs code is, whoever wrote it.
			j.sayConfigKeys(p, "written after wsh made it read-only")
			continue
		}
		if _, said := j.madeSaid.LoadOrStore("changed:"+p+"\x00"+now, true); !said {
			fmt.Fprintf(j.warn, "wsh: %s was changed after wsh made it read-only during the run (a process that held it open, or worked in it, from before still can write it): check it before a program on the host reads it\n", shown(p))
		}
		j.sayHooks(p, true)
	}
}
