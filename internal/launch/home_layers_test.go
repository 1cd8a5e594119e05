//go:build linux && cgo

package launch

import (
	"os"
	"strings"
	"testing"
)

// TestSharedCachesDocumented: every shared cache is in docs/sandbox.md's
// table of them.
func TestSharedCachesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range SharedCaches {
		if !strings.Contains(string(b), "`"+c+"`") {
			t.Errorf("docs/sandbox.md does not list the shared cache %s", c)
		}
	}
}

// TestProjectLayerDirs: each project's layer has a directory of its own
// beneath the home's, apart from the shared layer's.
func TestProjectLayerDirs(t *testing.T) {
	shared := HomePlan{Home: "/home/u", State: "/home/u/.local/state/wsh"}
	a, b := shared, shared
	a.Project, b.Project = "/home/u/a", "/home/u/b"
	if a.Dir() == b.Dir() || a.Dir() == shared.Dir() || a.Upper() == shared.Upper() {
		t.Errorf("layers share a directory: %s %s %s", shared.Dir(), a.Dir(), b.Dir())
	}
	if !strings.HasPrefix(a.Dir(), shared.Dir()+"/"+ProjectsDir+"/") || a.Shared() != shared {
		t.Errorf("project layer %s is not beneath %s/%s", a.Dir(), shared.Dir(), ProjectsDir)
	}
}
