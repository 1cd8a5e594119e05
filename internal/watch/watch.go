//go:build linux && cgo

package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Protection notes a command's protection as it starts (start) and
// checks it once it ended: which of the protected paths that were
// missing, and that wsh does not make, are there now, and which symlinks
// on the way to a protected path lead elsewhere. The jail could not keep
// the command from either; a program on the host may run what they lead
// to. Each is said once. The Runner's Close checks what commands still
// running (a background job) may have done.
func (w *Watch) Protection(prot *protect.Protection, start bool) {
	w.mu.Lock()
	if w.watching == nil {
		w.watching = map[*protect.Protection]bool{}
	}
	if start {
		w.watching[prot] = true
		w.mu.Unlock()
		return
	}
	delete(w.watching, prot)
	w.mu.Unlock()
	w.checkProtection(prot, "a command")
}

// checkProtection says what changed of prot since it was taken, done by
// who ("a command", or the shell's own redirection).
func (w *Watch) checkProtection(prot *protect.Protection, who string) {
	for p, before := range prot.Stamps {
		now := protect.Stamp(p)
		switch {
		case before == protect.StampTooLarge || now == protect.StampTooLarge:
			if _, said := w.said.LoadOrStore("large:"+p, true); !said {
				fmt.Fprintf(w.warn, "wsh: cannot tell whether %s changed %s, a protected path with more than %d entries (the %s rung cannot keep it read-only): check it before a program on the host reads it\n", who, p, protect.MaxStamped, w.rung())
			}
		case now != before && !(prot.Hollow[p] && protect.Hollow(p)):
			// From nothing or empty to nothing or empty (another
			// run's placeholder, made or removed) is no change to say.
			// Said once for each state it is left in: a second change is
			// said again.
			if _, said := w.said.LoadOrStore("changed:"+p+"\x00"+now, true); !said {
				fmt.Fprintf(w.warn, "wsh: %s changed %s, a protected path (the %s rung cannot keep it read-only): check it before a program on the host reads it\n", who, p, w.rung())
			}
		}
	}
	for _, p := range prot.Missing {
		_, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			// A directory on the way made unsearchable may hide a file
			// made: said once for the directory, not for each path.
			dir := filepath.Dir(p)
			if _, said := w.said.LoadOrStore("dir:"+dir, true); !said {
				fmt.Fprintf(w.warn, "wsh: cannot tell whether %s made protected paths in %s (%v): check it before a program on the host reads it\n", who, dir, proto.UnwrapErrno(err))
			}
			continue
		}
		if protect.Hollow(p) {
			continue // an empty one: another run's placeholder, say
		}
		if _, said := w.said.LoadOrStore(p, true); !said {
			fmt.Fprintf(w.warn, "wsh: %s made %s, a protected path that was missing: check it before a program on the host reads it\n", who, p)
		}
	}
	for link, target := range prot.Links {
		now, err := os.Readlink(link)
		if err == nil && now == target {
			continue
		}
		if _, said := w.said.LoadOrStore("link:"+link, true); !said {
			if err != nil {
				now = "nothing: " + proto.UnwrapErrno(err).Error()
			}
			fmt.Fprintf(w.warn, "wsh: %s changed the symlink %s on the way to a protected path (it led to %s, now %s): check it before a program on the host reads it\n", who, link, target, now)
		}
	}
}

// Wait waits, at most d, until no jailed command runs.
func (w *Watch) Wait(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		w.mu.Lock()
		n := len(w.watching)
		w.mu.Unlock()
		if n == 0 {
			return
		}
	}
}

// CheckAll checks the protection of every command still running,
// what the shell's own redirections wrote, and the paths bound read-only
// during the run.
func (w *Watch) CheckAll() {
	w.CheckShellWrites()
	w.CheckBound()
	w.mu.Lock()
	var ps []*protect.Protection
	for p := range w.watching {
		ps = append(ps, p)
	}
	w.mu.Unlock()
	for _, p := range ps {
		w.checkProtection(p, "a command")
	}
}

// ShellWrite keeps prot, the protection of dir taken before a write
// of the shell's own redirection there, to be checked once the file is
// written: at the end of each later command, at the end of the Run and
// at Close (CheckShellWrites). The open itself makes the file
// empty, which is no change to say of a name wsh makes empty (hollow).
// One per directory: a later write's protection there, taken after the
// earlier one's file was made, says its later changes.
func (w *Watch) ShellWrite(dir string, prot *protect.Protection) {
	w.mu.Lock()
	if w.shellWrites == nil {
		w.shellWrites = map[string]*protect.Protection{}
	}
	old := w.shellWrites[dir]
	w.shellWrites[dir] = prot
	w.mu.Unlock()
	if old != nil {
		w.checkProtection(old, "the shell's redirection")
	}
}

// CheckShellWrites says what the shell's own redirections made or
// changed of the protected paths (ShellWrite).
func (w *Watch) CheckShellWrites() {
	w.mu.Lock()
	if len(w.shellWrites) == 0 {
		w.mu.Unlock()
		return // the common case: every command pays this look
	}
	ps := make([]*protect.Protection, 0, len(w.shellWrites))
	for _, p := range w.shellWrites {
		ps = append(ps, p)
	}
	w.mu.Unlock()
	for _, p := range ps {
		w.checkProtection(p, "the shell's redirection")
	}
}

// Running reports whether a command whose protection is watched runs.
func (w *Watch) Running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.watching) > 0
}
