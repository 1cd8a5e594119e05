package initproc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// TestFindHiddenThroughALink: a hidden path that did not exist when wsh
// started, which a command made a symlink, is covered where it leads: by
// a plain link, and through /proc/self (a plain link of procfs's root);
// through a magic link (/proc/self/root), whose end cannot be told, the
// jail fails (ELOOP) rather than cover nothing.
func TestFindHiddenThroughALink(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	if err := os.WriteFile(notes, []byte("written later, through the link"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"plain": "notes", "viaself": "/proc/self/../.." + notes, "viaroot": "/proc/self/root" + notes} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	st := &setupState{spec: &proto.Spec{}}
	for _, name := range []string{"plain", "viaself"} {
		where, _, ok, err := st.findHidden(proto.PathID{Path: filepath.Join(dir, name)})
		if !ok || err != nil || where != notes {
			t.Errorf("hidden %s: cover %v at %s (%v), want a cover at %s", name, ok, where, err, notes)
		}
	}
	if _, _, ok, err := st.findHidden(proto.PathID{Path: filepath.Join(dir, "viaroot")}); ok || !errors.Is(err, unix.ELOOP) {
		t.Errorf("hidden viaroot: cover %v, %v; want no cover and ELOOP, which fails the jail", ok, err)
	}
}
