//go:build linux && cgo

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The home's tool files (internal/protect/protect_home.go) that the test
// plants, hours old, in a home that is the start directory: files, and
// directories a command would add to.
var (
	homeToolFiles = []string{".npmrc", ".yarnrc", ".yarnrc.yml", ".gdbinit", ".vimrc", ".exrc", ".tmux.conf",
		".mavenrc", ".pythonrc", ".irbrc", ".pryrc", ".psqlrc", ".Rprofile", ".Renviron", ".emacs", ".guile",
		".sqliterc", ".gemrc", ".condarc", ".cargo/config.toml", ".cargo/env", ".m2/settings.xml",
		".gradle/gradle.properties", ".docker/config.json"}
	homeToolDirs = []string{".gradle/init.d", ".config/nvim", ".config/gdb", ".config/tmux", ".vim", ".emacs.d",
		".ipython", ".config/pip", ".node_modules", ".node_libraries", ".cargo/bin", "go/bin"}
	// homeToolPlaceholders are made, for the run, where they are missing.
	homeToolPlaceholders = []string{".npmrc", ".yarnrc", ".gdbinit", ".tmux.conf", ".mavenrc", ".irbrc", ".pryrc",
		".psqlrc", ".Rprofile", ".guile", ".sqliterc", ".vim", ".node_modules", ".node_libraries"}
)

// userSite is the home's user site-packages of the host's python3.
func userSite(t *testing.T) string {
	t.Helper()
	m, _ := filepath.Glob("/usr/lib/python3.[0-9]*")
	if len(m) == 0 {
		t.Fatal("no /usr/lib/python3.N on this host: the test needs the host's python3")
	}
	return filepath.Join(".local", "lib", filepath.Base(m[0]), "site-packages")
}

// TestHomeToolFilesReadOnly: in a home that is the start directory, no
// command can change a tool's rc file or add to a tool's code directory
// (each way's errno read back); the host's files keep their content and
// the home lists as before.
func TestHomeToolFilesReadOnly(t *testing.T) {
	probe := probeBin(t)
	dirs := append(append([]string(nil), homeToolDirs...), userSite(t))
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home := workDir(t, u)
			var targets []string
			for _, f := range homeToolFiles {
				plantOld(t, u, home, f)
				targets = append(targets, f)
			}
			for _, d := range dirs {
				plantOld(t, u, home, filepath.Join(d, "host"))
				targets = append(targets, filepath.Join(d, "planted.pth"))
			}
			before := listing(t, home)
			script := `for p in ` + strings.Join(targets, " ") + `; do echo "$p: $("$PROBE" make "$p")"; done`
			r := runWsh(t, u, home, append([]string{"PROBE=" + probe, "HOME=" + home}, jailEnv...), script)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.status != 0 || len(lines) != len(targets) {
				t.Fatalf("status %d, %d attempts of %d:\n%s%s", r.status, len(lines), len(targets), r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("a command changed a tool's file of the home: %s", l)
				}
			}
			for _, f := range homeToolFiles {
				if b, err := os.ReadFile(filepath.Join(home, f)); err != nil || string(b) != "host\n" {
					t.Errorf("%s on the host: %q, %v", f, b, err)
				}
			}
			sameListing(t, home, before, "the attempts on the home's tool files", r)
		})
	}
}

// TestMissingHomeToolFilesCannotBeMade: where a tool's file that wsh
// makes a placeholder for is missing in a home that is the start
// directory, no command can make it (each way's errno read back), and
// nothing is left after the run.
func TestMissingHomeToolFilesCannotBeMade(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home := workDir(t, u)
			before := listing(t, home)
			script := `for p in ` + strings.Join(homeToolPlaceholders, " ") + `; do echo "$p: $("$PROBE" make "$p")"; done`
			r := runWsh(t, u, home, append([]string{"PROBE=" + probe, "HOME=" + home}, jailEnv...), script)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.status != 0 || len(lines) != len(homeToolPlaceholders) {
				t.Fatalf("status %d, %d attempts:\n%s%s", r.status, len(lines), r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("a command made a missing tool's file of the home: %s", l)
				}
			}
			sameListing(t, home, before, "the attempts in the home", r)
		})
	}
}

// plantOld writes "host\n" at rel in home, making its directories, each
// owned by u and two hours old, as a home's files are.
func plantOld(t *testing.T, u user, home, rel string) {
	t.Helper()
	path := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	for p := path; p != home; p = filepath.Dir(p) {
		if u.uid >= 0 {
			if err := os.Lchown(p, u.uid, u.uid); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}
