//go:build linux && cgo

package jailer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"wsh/internal/protect"
)

// watchProtection notes a command's protection as it starts (start) and
// checks it once it ended: which of the protected paths that were
// missing, and that wsh does not make, are there now, and which symlinks
// on the way to a protected path lead elsewhere. The jail could not keep
// the command from either; a program on the host may run what they lead
// to. Each is said once. The Runner's Close checks what commands still
// running (a background job) may have done.
func (j *Jailer) watchProtection(prot *protect.Protection, start bool) {
	j.watchMu.Lock()
	if j.watching == nil {
		j.watching = map[*protect.Protection]bool{}
	}
	if start {
		j.watching[prot] = true
		j.watchMu.Unlock()
		return
	}
	delete(j.watching, prot)
	j.watchMu.Unlock()
	j.checkProtection(prot, "a command")
}

// checkProtection says what changed of prot since it was taken, done by
// who ("a command", or the shell's own redirection).
func (j *Jailer) checkProtection(prot *protect.Protection, who string) {
	for p, before := range prot.Stamps {
		now := protect.Stamp(p)
		switch {
		case before == protect.StampTooLarge || now == protect.StampTooLarge:
			if _, said := j.madeSaid.LoadOrStore("large:"+p, true); !said {
				fmt.Fprintf(j.warn, "wsh: cannot tell whether %s changed %s, a protected path with more than %d entries (the %s rung cannot keep it read-only): check it before a program on the host reads it\n", who, p, protect.MaxStamped, j.rung)
			}
		case now != before && !(prot.Hollow[p] && protect.Hollow(p)):
			// From nothing or empty to nothing or empty (another
			// run's placeholder, made or removed) is no change to say.
			// Said once for each state it is left in: a second change is
			// said again.
			if _, said := j.madeSaid.LoadOrStore("changed:"+p+"\x00"+now, true); !said {
				fmt.Fprintf(j.warn, "wsh: %s changed %s, a protected path (the %s rung cannot keep it read-only): check it before a program on the host reads it\n", who, p, j.rung)
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
			if _, said := j.madeSaid.LoadOrStore("dir:"+dir, true); !said {
				fmt.Fprintf(j.warn, "wsh: cannot tell whether %s made protected paths in %s (%v): check it before a program on the host reads it\n", who, dir, unwrapErrno(err))
			}
			continue
		}
		if protect.Hollow(p) {
			continue // an empty one: another run's placeholder, say
		}
		if _, said := j.madeSaid.LoadOrStore(p, true); !said {
			fmt.Fprintf(j.warn, "wsh: %s made %s, a protected path that was missing: check it before a program on the host reads it\n", who, p)
		}
	}
	for link, target := range prot.Links {
		now, err := os.Readlink(link)
		if err == nil && now == target {
			continue
		}
		if _, said := j.madeSaid.LoadOrStore("link:"+link, true); !said {
			if err != nil {
				now = "nothing: " + unwrapErrno(err).Error()
			}
			fmt.Fprintf(j.warn, "wsh: %s changed the symlink %s on the way to a protected path (it led to %s, now %s): check it before a program on the host reads it\n", who, link, target, now)
		}
	}
}

// waitCommands waits, at most d, until no jailed command runs.
func (j *Jailer) waitCommands(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		j.watchMu.Lock()
		n := len(j.watching)
		j.watchMu.Unlock()
		if n == 0 {
			return
		}
	}
}

// checkWatched checks the protection of every command still running,
// what the shell's own redirections wrote, and the paths bound read-only
// during the run.
func (j *Jailer) checkWatched() {
	j.checkShellWrites()
	j.checkBound()
	j.watchMu.Lock()
	var ps []*protect.Protection
	for p := range j.watching {
		ps = append(ps, p)
	}
	j.watchMu.Unlock()
	for _, p := range ps {
		j.checkProtection(p, "a command")
	}
}

// noteShellWrite keeps prot, the protection of dir taken before a write
// of the shell's own redirection there, to be checked once the file is
// written: at the end of each later command, at the end of the Run and
// at Close (checkShellWrites). The open itself makes the file
// empty, which is no change to say of a name wsh makes empty (hollow).
// One per directory: a later write's protection there, taken after the
// earlier one's file was made, says its later changes.
func (j *Jailer) noteShellWrite(dir string, prot *protect.Protection) {
	j.watchMu.Lock()
	if j.shellWrites == nil {
		j.shellWrites = map[string]*protect.Protection{}
	}
	old := j.shellWrites[dir]
	j.shellWrites[dir] = prot
	j.watchMu.Unlock()
	if old != nil {
		j.checkProtection(old, "the shell's redirection")
	}
}

// checkShellWrites says what the shell's own redirections made or
// changed of the protected paths (noteShellWrite).
func (j *Jailer) checkShellWrites() {
	j.watchMu.Lock()
	if len(j.shellWrites) == 0 {
		j.watchMu.Unlock()
		return // the common case: every command pays this look
	}
	ps := make([]*protect.Protection, 0, len(j.shellWrites))
	for _, p := range j.shellWrites {
		ps = append(ps, p)
	}
	j.watchMu.Unlock()
	for _, p := range ps {
		j.checkProtection(p, "the shell's redirection")
	}
}
