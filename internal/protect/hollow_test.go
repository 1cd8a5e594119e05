//go:build linux && cgo

package protect

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHollow: absent, and an empty directory or file of a name wsh makes
// as such, are hollow; a directory with an entry, a file with a byte, a
// symlink (even to nothing), a name wsh makes of another kind, and an
// empty directory of a name wsh does not make are not.
func TestHollow(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, err := range []error{
		os.Mkdir(p(".vscode"), 0o755), os.WriteFile(p("CLAUDE.md"), nil, 0o644), os.Mkdir(p("empty-dir"), 0o755),
		os.Mkdir(p("full-dir"), 0o755), os.WriteFile(p("full-dir/x"), nil, 0o644),
		os.WriteFile(p("file"), []byte("x"), 0o644), os.Symlink("nowhere", p("link")),
		os.Mkdir(p("node_modules"), 0o755), os.WriteFile(p(".git"), nil, 0o644), os.Mkdir(p(".cargo"), 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]bool{
		"missing": true, "missing/below": true, "CLAUDE.md/below": true, ".vscode": true, "CLAUDE.md": true,
		"empty-dir": false, // not a name wsh makes: .config/fish
		"full-dir":  false, "file": false, "link": false,
		"node_modules": false, ".git": false, ".cargo": true, // the table's kinds: file, dir, dir
	} {
		if got := Hollow(p(name)); got != want {
			t.Errorf("%s: hollow %v, want %v", name, got, want)
		}
	}
}
