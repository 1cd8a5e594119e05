//go:build linux && cgo

package worktree

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLinkedCommon: the common directory of a linked worktree is found
// only where git's links agree both ways and the common directory is a
// gitdir; a .git file alone (which a command can write) finds nothing.
func TestLinkedCommon(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	common := filepath.Join(root, "repo", ".git")
	x := filepath.Join(common, "worktrees", "wt")
	tree := filepath.Join(root, "wt")
	other := filepath.Join(root, "other")
	for _, d := range []string{filepath.Join(common, "objects"), filepath.Join(common, "refs"), x, filepath.Join(tree, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(common, "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(x, "commondir"), "../..\n")
	write(filepath.Join(x, "gitdir"), filepath.Join(tree, ".git")+"\n")
	write(filepath.Join(tree, ".git"), "gitdir: "+x+"\n")
	write(filepath.Join(other, ".git"), "gitdir: "+x+"\n")
	if got := linkedCommon(filepath.Join(tree, "sub")); got != common {
		t.Errorf("from the worktree: %q, want %q", got, common)
	}
	if got := linkedCommon(other); got != "" {
		t.Errorf("from a .git file the gitdir does not name back: %q", got)
	}
	write(filepath.Join(other, ".git"), "gitdir: "+filepath.Join(root, "repo")+"\n")
	if got := linkedCommon(other); got != "" {
		t.Errorf("from a .git file naming a directory that is no worktree's gitdir: %q", got)
	}
	write(filepath.Join(x, "commondir"), "../../../other\n")
	if got := linkedCommon(tree); got != "" {
		t.Errorf("with a commondir that does not hold the gitdir: %q", got)
	}
	write(filepath.Join(x, "commondir"), "../..\n")
	os.Remove(filepath.Join(common, "HEAD"))
	if got := linkedCommon(tree); got != "" {
		t.Errorf("with a common directory that is no gitdir: %q", got)
	}
}
