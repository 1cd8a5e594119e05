//go:build linux && cgo

package paths

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wsh/config"
)

// groundFixture lays out, in a temporary directory: a home H with a
// .cargo/bin and a user's own symlink; a stand-in S for /tmp; a project
// directory P (any directory a run could start in); a PATH directory.
func groundFixture(t *testing.T) (g Ground, root string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"H/.cargo/bin", "H/.local", "H/src", "S", "P/real", "P/tools/bin/sub", "data/work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"H/work":      root + "/data/work", // the user's own, in the home itself
		"H/chain":     root + "/S/hop",     // the user's own, leading on to one in S
		"S/hop":       root + "/data/work", // in the temporary directory
		"S/cargo":     root + "/H/.cargo/bin",
		"P/proj":      root + "/H/.cargo/bin", // where a project was
		"P/rel":       "real",                 // relative, in a project's directory
		"H/src/tools": "../../P/tools",        // in a directory of the home
		"H/bin2":      ".cargo/bin",           // the user's own, to a tool directory
	}
	for at, to := range links {
		if err := os.Symlink(to, filepath.Join(root, at)); err != nil {
			t.Fatal(err)
		}
	}
	g = Ground{home: root + "/H", shared: []string{root + "/S"}, pathDirs: []string{root + "/P/tools/bin", root + "/H"},
		homeCode: []string{root + "/H/.cargo/bin", root + "/H/.local/bin"}}
	return g, root
}

func TestGroundRule(t *testing.T) {
	g, root := groundFixture(t)
	for _, c := range []struct {
		path      string
		byDefault bool
		want      string // in the error, or "" for none
	}{
		{"H/work", true, ""},
		{"H/work/..", true, ""},
		{"data/work", true, ""},
		{"H", true, ""},       // the home: not made writable by default, so not checked
		{"H", false, ""},      // named in WSH_WRITABLE: the user's writable home
		{"P/tools", true, ""}, // holds a PATH directory, but not one of the home's
		{"S/hop", true, "goes through the symlink " + root + "/S/hop (-> " + root + "/data/work), which lies in " + root + "/S, a temporary directory, where a jailed command can make one"},
		{"H/chain", true, "goes through the symlink " + root + "/S/hop"},
		{"P/proj", true, "goes through the symlink " + root + "/P/proj (-> " + root + "/H/.cargo/bin), which lies in " + root + "/P, a directory a run started in it makes writable"},
		{"P/rel", false, "goes through the symlink " + root + "/P/rel (-> real)"},
		{"H/src/tools", true, "goes through the symlink " + root + "/H/src/tools"},
		{"H/bin2", true, "resolves to " + root + "/H/.cargo/bin, which is a tool directory of the home"},
		{"H/.cargo/bin", true, "is a tool directory of the home; wsh never makes writable"},
		{"H/.cargo", false, "holds " + root + "/H/.cargo/bin, a tool directory of the home"},
		{"H/.cargo", true, "holds " + root + "/H/.cargo/bin"},
		{"H/.local", false, "holds " + root + "/H/.local/bin"}, // before it exists
		{"P/tools/bin/sub", false, "lies in " + root + "/P/tools/bin, a directory of PATH"},
	} {
		p := filepath.Join(root, c.path)
		_, err := g.CheckReal("the start directory", p, c.byDefault)
		var ge *config.GroundError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (by default %v): %v, want no refusal", c.path, c.byDefault, err)
		case c.want != "" && (!errors.As(err, &ge) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s (by default %v): %v, want a GroundError saying %q", c.path, c.byDefault, err, c.want)
		case c.want != "" && !strings.HasPrefix(err.Error(), "refusing to start: the start directory "+p+" "):
			t.Errorf("%s: %v does not name the path", c.path, err)
		}
	}
}

func TestLinksOn(t *testing.T) {
	_, root := groundFixture(t)
	links, real, err := linksOn(root + "/H/chain/../work")
	if err != nil {
		t.Fatal(err)
	}
	want := []link{{root + "/H/chain", root + "/S/hop"}, {root + "/S/hop", root + "/data/work"}}
	if len(links) != 2 || links[0] != want[0] || links[1] != want[1] || real != root+"/data/work" {
		t.Errorf("linksOn: %q, %q; want %q, %q", links, real, want, root+"/data/work")
	}
	if r, _ := filepath.EvalSymlinks(root + "/H/chain/../work"); r != real {
		t.Errorf("linksOn resolved to %s, the kernel to %s", real, r)
	}
}

// TestGroundFromEnviron: the host's facts come from the environment as
// given: HOME, PATH, TMPDIR, GOBIN, GOPATH, CARGO_HOME; WSH_WRITABLE as
// spelled there, when it is what the configuration holds.
func TestGroundFromEnviron(t *testing.T) {
	_, root := groundFixture(t)
	gobin := filepath.Join(root, "gobin")
	if err := os.Mkdir(gobin, 0o755); err != nil {
		t.Fatal(err)
	}
	environ := []string{"HOME=" + root + "/H", "PATH=relative:" + root + "/P/tools/bin", "GOBIN=" + gobin, "TMPDIR=" + root + "/S"}
	g := NewGround(environ, nil)
	for _, want := range []string{root + "/H/.cargo/bin", root + "/H/.local/bin", gobin} {
		if !slices.Contains(g.homeCode, want) {
			t.Errorf("the home's tool directories %q lack %s", g.homeCode, want)
		}
	}
	if !slices.Contains(g.pathDirs, root+"/P/tools/bin") || len(g.pathDirs) != 1 || !slices.Contains(g.shared, root+"/S") {
		t.Errorf("PATH's directories %q, the temporary ones %q", g.pathDirs, g.shared)
	}
	w := []string{root + "/data/work"}
	_, err := CheckGround(nil, w, root+"/data/work", append(environ, "WSH_WRITABLE="+root+"/S/hop"))
	if err == nil || !strings.Contains(err.Error(), "the WSH_WRITABLE path "+root+"/S/hop goes through the symlink") {
		t.Errorf("WSH_WRITABLE through a symlink in TMPDIR: %v", err)
	}
	_, err = CheckGround([]string{root + "/P/rel"}, []string{root + "/P/real"}, root+"/data/work", environ)
	if err == nil || !strings.Contains(err.Error(), "the WSH_WRITABLE path "+root+"/P/rel goes through the symlink") {
		t.Errorf("WSH_WRITABLE, given through a symlink in a project: %v", err)
	}
	_, err = CheckGround(nil, nil, root+"/P/real", append(environ, "TMPDIR="+root+"/S/cargo"))
	if err == nil || !strings.Contains(err.Error(), "TMPDIR "+root+"/S/cargo goes through the symlink") {
		t.Errorf("TMPDIR through a symlink in the old TMPDIR: %v", err)
	}
}

// TestGroundIsWhatIsUsed: the writable paths are the resolutions the check
// made, not a second one: a start directory or $TMPDIR that a command of
// another run swaps for a symlink (to a tool directory) right after the
// check still gives the checked path, and a WSH_WRITABLE path that leads
// elsewhere than it did when it was validated is refused.
func TestGroundIsWhatIsUsed(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "H")
	proj, tmp, cargo := filepath.Join(root, "t/proj"), filepath.Join(root, "t/x"), filepath.Join(home, ".cargo/bin")
	for _, d := range []string{proj, tmp, cargo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	environ := []string{"HOME=" + home, "PATH=" + cargo + ":/usr/bin:/bin", "TMPDIR=" + tmp}
	real, err := CheckGround(nil, nil, proj, environ)
	if err != nil {
		t.Fatal(err)
	}
	// The swap, after the check.
	for _, p := range []string{proj, tmp} {
		if err := os.Rename(p, p+".away"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(cargo, p); err != nil {
			t.Fatal(err)
		}
	}
	noTmp := environ[:2]
	w, _, err := WritableAndWhy(config.Config{}, proj, noTmp, real)
	if err != nil || slices.Contains(w, cargo) || !slices.Contains(w, proj) {
		t.Errorf("the writable paths %q (%v): want the start directory as checked, %s, not %s, where a symlink made after the check leads", w, err, proj, cargo)
	}
	_, _, err = WritableAndWhy(config.Config{}, proj, environ, real)
	if err == nil || !strings.Contains(err.Error(), "TMPDIR "+tmp+" resolved to "+tmp+" and now to "+cargo) {
		t.Errorf("TMPDIR swapped after the check: %v", err)
	}
	// What the check could not resolve (a path that changed under its
	// walk) is not resolved again: TMPDIR is left out, a start directory
	// is an error.
	w, _, err = WritableAndWhy(config.Config{}, proj, environ, map[string]string{proj: proj + ".away", tmp: ""})
	if err != nil || slices.Contains(w, cargo) || slices.Contains(w, tmp) {
		t.Errorf("TMPDIR the check could not resolve: %q, %v; want it left out", w, err)
	}
	if _, _, err = WritableAndWhy(config.Config{}, proj, noTmp, map[string]string{proj: ""}); err == nil {
		t.Errorf("a start directory the check could not resolve was resolved again")
	}
	// WSH_WRITABLE: validated as one path, leading to another now.
	_, err = CheckGround([]string{proj}, []string{proj + ".away"}, root, noTmp)
	if err == nil || !strings.Contains(err.Error(), "changed as wsh started") {
		t.Errorf("a WSH_WRITABLE path that leads elsewhere than when it was validated: %v", err)
	}
}
