//go:build linux && cgo

package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wsh/degrade"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

func newWatch(t *testing.T) (*Watch, *strings.Builder) {
	t.Helper()
	var out strings.Builder
	return New(&out, func() degrade.Rung { return degrade.RungLandlock }), &out
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProtectionSaysWhatACommandDid: what a command made, changed, or
// pointed elsewhere among the protected paths is read back from the
// files once it ended and said once each; the rung is named; a command
// whose protection is watched is running until its end.
func TestProtectionSaysWhatACommandDid(t *testing.T) {
	dir := t.TempDir()
	changed, made, link := filepath.Join(dir, "changed"), filepath.Join(dir, "made"), filepath.Join(dir, "link")
	writeFile(t, changed, "before")
	if err := os.Symlink("changed", link); err != nil {
		t.Fatal(err)
	}
	prot := &protect.Protection{
		Missing: []string{made},
		Links:   map[string]string{link: "changed"},
		Stamps:  map[string]string{changed: protect.Stamp(changed)},
	}
	w, out := newWatch(t)
	w.Protection(prot, true)
	if !w.Running() {
		t.Error("a command whose protection is watched is not running")
	}
	// As a command would: a new file renamed over the protected one (a
	// new inode), a missing one made, the symlink pointed elsewhere.
	writeFile(t, changed+".new", "after")
	if err := os.Rename(changed+".new", changed); err != nil {
		t.Fatal(err)
	}
	writeFile(t, made, "hook")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/elsewhere", link); err != nil {
		t.Fatal(err)
	}
	w.Protection(prot, false)
	if w.Running() {
		t.Error("a command whose protection's watch ended is running")
	}
	said := out.String()
	for _, want := range []string{
		"wsh: a command changed " + changed + ", a protected path (the landlock rung cannot keep it read-only)",
		"wsh: a command made " + made + ", a protected path that was missing",
		"wsh: a command changed the symlink " + link + " on the way to a protected path (it led to changed, now /elsewhere)",
	} {
		if strings.Count(said, want) != 1 {
			t.Errorf("said %d times, want once: %q; said:\n%s", strings.Count(said, want), want, said)
		}
	}
	// Checked again (a second command's end, Close): nothing new is said.
	w.CheckAll()
	w.checkProtection(prot, "a command")
	if out.String() != said {
		t.Errorf("said again:\n%s", strings.TrimPrefix(out.String(), said))
	}
}

// TestBoundConfigSaysKeys: a git config bound read-only in a live
// session that is written after the bind with a key the host's git runs
// is said, with that key, once; a hooks directory bound with a hook in
// it is said, its samples not.
func TestBoundConfigSaysKeys(t *testing.T) {
	dir := t.TempDir()
	config, hooks := filepath.Join(dir, "config"), filepath.Join(dir, "hooks")
	writeFile(t, config, "[core]\n\tbare = false\n")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(hooks, "pre-commit.sample"), "#!/bin/sh\n")
	w, out := newWatch(t)
	w.Bound([]proto.PathID{{Path: config}, {Path: hooks}})
	w.CheckBound()
	if out.Len() != 0 {
		t.Fatalf("said of paths unchanged since their bind:\n%s", out.String())
	}
	writeFile(t, config+".new", "[core]\n\tbare = false\n\tfsmonitor = ./run-me\n")
	if err := os.Rename(config+".new", config); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(hooks, "post-checkout"), "#!/bin/sh\n")
	w.CheckBound()
	w.CheckBound()
	said := out.String()
	for _, want := range []string{
		"wsh: " + config + ", written after wsh made it read-only, sets core.fsmonitor",
		"wsh: " + filepath.Join(hooks, "post-checkout") + " was written in a repository made during the run, after wsh made its hooks read-only",
	} {
		if strings.Count(said, want) != 1 {
			t.Errorf("said %d times, want once: %q; said:\n%s", strings.Count(said, want), want, said)
		}
	}
	if strings.Contains(said, ".sample") {
		t.Errorf("a sample hook was said:\n%s", said)
	}
}
