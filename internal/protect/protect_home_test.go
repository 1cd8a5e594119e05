//go:build linux && cgo

package protect

import (
	"os"
	"strings"
	"testing"
)

// TestHomeToolFilesDocumented: every name of the home's tool files is in
// docs/config.md's table of them, written as the table writes a path.
func TestHomeToolFilesDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range homeToolNames() {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/config.md does not list the home's tool file %s", n)
		}
	}
}
