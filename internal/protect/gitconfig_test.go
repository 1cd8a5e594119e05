//go:build linux && cgo

package protect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitConfigValue reads core.hooksPath as git does, in the forms a
// config file has.
func TestGitConfigValue(t *testing.T) {
	tests := []struct {
		name, config, want string
		ok                 bool
	}{
		{"plain", "[core]\n\thooksPath = .husky\n", ".husky", true},
		{"case", "[CORE]\n\tHooksPath=.githooks\n", ".githooks", true},
		{"quoted, with a comment", "[core]\n\thooksPath = \"my hooks\" # the hooks\n", "my hooks", true},
		{"a comment after the value", "[core]\n\thooksPath = hooks ; x\n", "hooks", true},
		{"the last wins", "[core]\n\thooksPath = a\n[user]\n\tname = x\n[core]\n\thooksPath = b\n", "b", true},
		{"a subsection is not core", "[core \"x\"]\n\thooksPath = a\n", "", false},
		{"another section", "[user]\n\thooksPath = a\n", "", false},
		{"on the section's line", "[core] hooksPath = inline\n", "inline", true},
		{"a continued line", "[core]\n\thooksPath = ho\\\noks\n", "hooks", true},
		{"escapes", "[core]\n\thooksPath = \"a\\\\b\\\"c\"\n", `a\b"c`, true},
		{"commented out", "[core]\n#\thooksPath = a\n;hooksPath = b\n", "", false},
		{"none", "[core]\n\tbare = false\n", "", false},
		{"a byte order mark", "\ufeff[core]\n\thooksPath = .githooks\n", ".githooks", true},
		{"a continuation on the last line", "[core]\n\thooksPath = hooks\\", "hooks", true},
		{"three backslashes continue", "[core]\n\thooksPath = a\\\\\\\nb\n", `a\b`, true},
		{"two backslashes do not", "[core]\n\thooksPath = a\\\\\n\tbare = b\n", `a\`, true},
		{"the old dotted subsection is not core", "[core.x]\n\thooksPath = a\n", "", false},
		{"CRLF", "[core]\r\n\thooksPath = crlf\r\n", "crlf", true},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "config")
			if err := os.WriteFile(p, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := gitConfigValue(p, "core", "hookspath")
			if got != tt.want || ok != tt.ok {
				t.Errorf("gitConfigValue = %q, %v, want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if _, ok := gitConfigValue(filepath.Join(dir, "missing"), "core", "hookspath"); ok {
		t.Error("a missing file has a value")
	}
	long := filepath.Join(dir, "long")
	if err := os.WriteFile(long, []byte("[core]\n\tx = "+strings.Repeat("a", 2<<20)+"\n\thooksPath = h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readGitConfig(long); err == nil {
		t.Error("a config with a line of 2 MiB read without an error: its hooksPath would be missed")
	}
}

// TestGitmodules reads the submodules' names and paths in the forms git
// reads them (the sixth review's: a key on the header's line, the
// old dotted subsection, a continued line).
func TestGitmodules(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".gitmodules")
	if err := os.WriteFile(p, []byte("[submodule \"one\"] path = deep/one\n"+
		"[submodule.Two]\n\tpath = deep/two\n"+
		"[submodule \"three\"]\n\tpath = deep/\\\nthree\n"+
		"[submodule \"f\\\"our\"]\n\turl = x\n\tPATH = deep/four\n"+
		"[core]\n\tpath = not/a/submodule\n"+
		"[submodule \"one\"]\n\tpath = deep/one-moved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := gitmodules(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []submodule{{"one", "deep/one-moved"}, {"two", "deep/two"}, {"three", "deep/three"}, {`f"our`, "deep/four"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("gitmodules = %v, want %v", got, want)
	}
	if got, err := gitmodules(p + ".missing"); err != nil || len(got) != 0 {
		t.Errorf("a missing .gitmodules: %v, %v", got, err)
	}
}
