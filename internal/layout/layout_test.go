package layout

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the most lines of Go, tests aside, one package may hold.
const maxLines = 3000

// TestPackageSize: no directory of the module holds more than maxLines
// lines of non-test Go: a package that grows past it is to be split by
// what its files hold.
func TestPackageSize(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root: %v", err)
	}
	lines := map[string]int{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(p, "go.mod"))) {
			return filepath.SkipDir // another module, or not Go source
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines[filepath.Dir(p)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 10 {
		t.Fatalf("found Go in %d directories only: the walk missed the module", len(lines))
	}
	for dir, n := range lines {
		if n > maxLines {
			rel, _ := filepath.Rel(root, dir)
			t.Errorf("%s holds %d lines of Go (tests aside), more than %d: split it by what its files hold", rel, n, maxLines)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
