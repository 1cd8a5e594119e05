//go:build linux && cgo

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"wsh/degrade"
	"wsh/internal/proto"
)

// Print is what a session's jail on rung depends on, of the hidden
// paths, now: hiddenPrint, and on the landlock rung grantedPrint.
func (ss *Sessions) Print(rung degrade.Rung) string {
	if rung == degrade.RungLandlock {
		return ss.hiddenPrint() + ss.grantedPrint()
	}
	return ss.hiddenPrint()
}

// grantedPrint is how the landlock rung's grants stand now: the identity
// of each writable path, and the directories above each hidden path (and
// those above /dev, which the landlock rung keeps out of its read grant
// too): their identity and the time their entries last changed.
// The landlock rung grants each entry of those directories, but the
// hidden path's, one by one, and Landlock cannot add a rule to a domain
// in force: an entry made there after the session's zygote was made is
// granted nothing in it, where a jail made now grants it. Less is
// reachable, never more; still the session is then made anew.
func (ss *Sessions) grantedPrint() string {
	var b strings.Builder
	seen := map[string]bool{}
	// The writable paths (and the FIFOs' directory) are granted by the
	// inode each path led to then: one moved away and made anew would be
	// writable at its old inode and not at its path.
	for _, w := range append(append([]proto.PathID(nil), ss.hiding.Writable...), proto.PathID{Path: ss.shm.Path}) {
		if w.Path == "" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(w.Path, &st); err == nil {
			fmt.Fprintf(&b, "w%s\x00%d:%d\n", w.Path, st.Dev, st.Ino)
		} else {
			fmt.Fprintf(&b, "w%s\x00-\n", w.Path)
		}
	}
	hidden := append(ss.hiding.HiddenNow(), proto.PathID{Path: "/dev"})
	for _, id := range hidden {
		for d := filepath.Dir(id.Path); ; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				var st syscall.Stat_t
				if err := syscall.Stat(d, &st); err == nil {
					fmt.Fprintf(&b, "%s\x00%d:%d:%d.%d\n", d, st.Dev, st.Ino, st.Mtim.Sec, st.Mtim.Nsec)
				} else {
					fmt.Fprintf(&b, "%s\x00-\n", d)
				}
			}
			if d == "/" || d == "." {
				break
			}
		}
	}
	return b.String()
}

// hiddenPrint is what the hidden paths are now, as the host shows each:
// where it leads and what is there (or that nothing is).
func (ss *Sessions) hiddenPrint() string {
	var b strings.Builder
	for _, id := range ss.hiding.HiddenNow() {
		b.WriteString(id.Path)
		b.WriteByte(0)
		if r, err := filepath.EvalSymlinks(id.Path); err == nil {
			b.WriteString(r)
		}
		b.WriteByte(0)
		if fi, err := os.Stat(id.Path); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				fmt.Fprintf(&b, "%d:%d", st.Dev, st.Ino)
			}
		} else {
			b.WriteString("-")
		}
		b.WriteByte('\n')
	}
	return b.String()
}
