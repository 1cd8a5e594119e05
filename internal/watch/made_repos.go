//go:build linux && cgo

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"wsh/internal/gitmediate"
	"wsh/internal/paths"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// SayHooks says each hook in dir, a hooks directory just bound read-only
// (sayHooks).
func (w *Watch) SayHooks(dir string) { w.sayHooks(dir, false) }

// sayHooks says each hook in dir, a hooks directory that appeared
// during the run and is read-only now: git init and git clone make only
// samples there (NAME.sample, which git never runs), so any other file
// was written by a command of the session before wsh bound the directory
// (in the same command as the git init, or by a job running meanwhile),
// or after (late) by a process that worked in it from before, and the
// host's next git command would run it.
func (w *Watch) sayHooks(dir string, late bool) {
	if filepath.Base(dir) != "hooks" {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return // not a directory: no hooks in it
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch {
		case late:
			if _, early := w.said.Load("early-hook:" + p); early {
				continue // said as written before the bind
			}
			if _, said := w.said.LoadOrStore("late-hook:"+p, true); !said {
				fmt.Fprintf(w.warn, "wsh: %s was written in a repository made during the run, after wsh made its hooks read-only, by a process that worked in them from before: git on the host runs it; check it before\n", paths.Shown(p))
			}
		default:
			if _, said := w.said.LoadOrStore("early-hook:"+p, true); !said {
				fmt.Fprintf(w.warn, "wsh: %s was written in a repository made during the run, before wsh could make its hooks read-only: git on the host runs it; check it before\n", paths.Shown(p))
			}
		}
	}
}

// A configSeen is a protected git config: its path and identity.
type configSeen struct {
	path     string
	dev, ino uint64
}

// NoteConfigs says, once each, the keys the host's git would run or load
// in a git config protected now that was not when the Runner's first jail
// was made (a repository made during the run, by git init or git clone;
// or made anew): on the full rung it is read-only from the next jail on,
// but a command may have written it before (in the same command as the
// git init, or a job running meanwhile). The lower rungs say a protected
// path made or changed after each command (Protection).
func (w *Watch) NoteConfigs(prot *protect.Protection) {
	w.configsMu.Lock()
	first := w.configs == nil
	if first {
		w.configs = map[configSeen]bool{}
	}
	var fresh []string
	for _, id := range append(append([]proto.PathID(nil), prot.Pins...), prot.Paths...) {
		if !gitmediate.ConfigName(filepath.Base(id.Path)) {
			continue
		}
		k := configSeen{id.Path, id.Dev, id.Ino}
		if !w.configs[k] {
			w.configs[k] = true
			if !first {
				fresh = append(fresh, id.Path)
			}
		}
	}
	w.configsMu.Unlock()
	for _, p := range fresh {
		w.sayConfigKeys(p, "made during the run before wsh could make it read-only")
	}
}

// sayConfigKeys says each key of the git config p that the host's git
// would run or load (gitmediate.Refusals), once per file and key; when says
// when p was written.
func (w *Watch) sayConfigKeys(p, when string) {
	b, err := protect.ReadRegular(p, gitmediate.MaxConfig)
	if err != nil {
		return // gone, or not a file: nothing in it for git to read
	}
	refused, err := gitmediate.Refusals(b)
	if err != nil {
		fmt.Fprintf(w.warn, "wsh: cannot tell what %s, made during the run, sets (%v): check it before a program on the host reads it\n", paths.Shown(p), err)
		return
	}
	for _, r := range refused {
		if _, said := w.said.LoadOrStore("config-key:"+p+"\x00"+r.Key, true); !said {
			fmt.Fprintf(w.warn, "wsh: %s, %s, sets %s, which %s: check it before a program on the host reads it\n", paths.Shown(p), when, paths.Shown(r.Key), r.Why)
		}
	}
}

// NoteConfigsAtEnd is NoteConfigs at a Run's end, when a command ran on
// the full rung: the last command's git configs (a repository it made, a
// worktree's commondir it pointed elsewhere) are read without a next
// command to take a protection. take is that protection, taken without
// mounts (no placeholder is made); it is not taken where no protection
// was noted before.
func (w *Watch) NoteConfigsAtEnd(take func() (protect.Protection, error)) {
	w.configsMu.Lock()
	ran := w.configs != nil
	w.configsMu.Unlock()
	if !ran {
		return
	}
	if prot, err := take(); err == nil {
		w.NoteConfigs(&prot)
	}
}
