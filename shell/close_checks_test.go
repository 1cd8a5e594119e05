//go:build linux && cgo

package shell_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wsh/shell"
)

// TestCloseSaysNothingAfterTheRunsEnd: a Runner's
// Close says nothing of a git config that changed after its last Run
// ended (the host's own git changed it): what a Run's end says is said at
// the Run's end, not again at Close, which says it only of commands run
// since (a job's, or an interpreter of package wrap's, which has no Run
// of wsh's). Found by the review of issue 32's layout.
func TestCloseSaysNothingAfterTheRunsEnd(t *testing.T) {
	dir := t.TempDir()
	git := filepath.Join(dir, ".git")
	for _, d := range []string{git, filepath.Join(git, "objects"), filepath.Join(git, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	cfg := filepath.Join(git, "config")
	os.WriteFile(cfg, []byte("[core]\n\tbare = false\n"), 0o644)
	var stderr bytes.Buffer
	r, err := shell.New(shell.Dir(dir), shell.StdIO(nil, &stderr, &stderr),
		shell.Env([]string{"PATH=/usr/bin:/bin", "HOME=" + dir}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), "env true"); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.Mode != shell.Confined {
		t.Fatalf("not confined: %v", st)
	}
	atRunEnd := stderr.String()
	// The host's own git (not a command of the Runner) changes the config
	// after the Run ended.
	os.Remove(cfg)
	if err := os.WriteFile(cfg, []byte("[core]\n\tfsmonitor = /bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if said := strings.TrimPrefix(stderr.String(), atRunEnd); said != "" {
		t.Errorf("Close said, after the Run's end:\n%s", said)
	}
}
