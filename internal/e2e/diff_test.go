//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// placeholders are what wsh makes in a start directory (docs/config.md,
// the protected paths), and removes when the run ends unless a job it
// left still runs: a documented difference, not compared.
var placeholders = []string{".agents", ".claude", ".codex", ".cursor", ".devcontainer", ".gemini", ".idea", ".vscode",
	".bashrc.d", ".ssh", ".gitconfig", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
	".zprofile", ".zshenv", ".zlogin", ".zlogout", ".bash_aliases", ".gitmodules", ".mcp.json", ".devcontainer.json",
	".npmrc", ".yarnrc", ".gdbinit", ".tmux.conf", ".mavenrc", ".irbrc", ".pryrc", ".psqlrc", ".Rprofile", ".guile",
	".sqliterc", ".vim", ".node_modules", ".node_libraries", ".lldbinit", ".pdbrc", ".ghci", ".hgrc", ".direnvrc",
	".zed", ".kiro", ".amazonq", ".roo", ".continue", ".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml"}

// A run is what one shell gave for one script.
type shellRun struct {
	stdout string
	status int
	stderr bool // it wrote to stderr (the messages' wording differs)
	files  []string
	said   string // what it wrote there, for the report only
}

func (r shellRun) String() string {
	return fmt.Sprintf("status %d, stderr %v, files %q, stdout %q", r.status, r.stderr, r.files, r.stdout)
}

// runShell runs `sh -c script` (bash or wsh) in a fresh directory, with
// a small environment and no standard input; with file, `sh script.sh`
// with file's content in script.sh there.
func runShell(t *testing.T, sh, script, file string) shellRun {
	t.Helper()
	dir := workDir(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sh, "-c", script)
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "script.sh"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd = exec.CommandContext(ctx, sh, "script.sh")
	}
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LC_ALL=C"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s did not run", sh)
	}
	r := shellRun{stdout: strings.ReplaceAll(out.String(), dir, "DIR"), status: cmd.ProcessState.ExitCode(), stderr: errb.Len() > 0, said: errb.String()}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(dir, p); rel != "." && !slices.Contains(placeholders, rel) {
			r.files = append(r.files, rel)
		}
		return nil
	})
	return r
}

// readLines reads a corpus file: one entry a line, # comments and blank
// lines left out.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "diff", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestDifferential runs the corpus (testdata/diff: one-liners, as `sh
// -c LINE`, and scripts, as `sh FILE`) under bash and under wsh, in the
// jail, and compares their output, status,
// whether they wrote to stderr, and the files they left. A script that
// differs must be in known.txt, with the difference said; one that is
// there and no longer differs (a fix upstream, or wsh's) fails too, so
// that the list stays true. Each difference known.txt says is in the
// README's "Known differences from bash".
func TestDifferential(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the differential test runs bash: %v", err)
	}
	known := map[string]string{}
	for _, l := range readLines(t, "known.txt") {
		script, why, ok := strings.Cut(l, "\t")
		if !ok {
			t.Fatalf("known.txt: %q has no tab between the script and the difference", l)
		}
		known[script] = why
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for script, why := range known {
		if !bytes.Contains(readme, []byte(why)) {
			t.Errorf("the README does not list the known difference of %q: %q", script, why)
		}
	}
	scripts := readLines(t, "oneliners.txt")
	files, err := filepath.Glob(filepath.Join("testdata", "diff", "scripts", "*.sh"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/diff/scripts: %v", err)
	}
	for _, f := range files {
		scripts = append(scripts, "scripts/"+filepath.Base(f)) // run as FILE
	}
	for s := range known {
		if !slices.Contains(scripts, s) {
			t.Errorf("known.txt names %q, which the corpus does not run", s)
		}
	}
	var same atomic.Int32
	t.Run("corpus", func(t *testing.T) {
		for i, script := range scripts {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				file := ""
				if name, ok := strings.CutPrefix(script, "scripts/"); ok {
					file = filepath.Join("testdata", "diff", "scripts", name)
				}
				b, w := runShell(t, bash, script, file), runShell(t, wshBin, script, file)
				why, isKnown := known[script]
				switch differs := b.String() != w.String(); {
				case differs && !isKnown:
					t.Errorf("wsh differs from bash on %q:\nbash: %v\nwsh:  %v\nwsh's stderr:\n%s", script, b, w, w.said)
				case !differs && isKnown:
					t.Errorf("%q no longer differs (%s): take it out of known.txt and the README", script, why)
				case !differs:
					same.Add(1)
				}
			})
		}
	})
	fmt.Printf("differential: %d of %d scripts give what bash gives; %d known differences\n", same.Load(), len(scripts), len(known))
}
