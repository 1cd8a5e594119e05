//go:build linux && cgo

package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"wsh/config"
	"wsh/internal/launch"
)

// TestPlanHome: which homes get a copy-on-write home, and what is said
// when one does not.
func TestPlanHome(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	os.MkdirAll(home, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(home, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	os.MkdirAll(filepath.Join(base, "w"), 0o755)
	os.Symlink(filepath.Join(base, "w"), filepath.Join(base, "towritable"))
	other := filepath.Join(base, "other")
	os.MkdirAll(other, 0o700)
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatalf("a home of another uid (this test runs as root): %v", err)
	}
	overlay := config.Config{Home: config.HomeOverlay}
	tests := []struct {
		name     string
		cfg      config.Config
		env      []string
		writable []string
		home     string // want plan.Home
		state    string // want plan.State
		why      string // want why to contain it; "" for none
	}{
		{"a home", overlay, []string{"HOME=" + home}, []string{base + "/proj"}, home, home + "/.local/state/wsh", ""},
		{"through a symlink", overlay, []string{"HOME=" + link}, nil, home, home + "/.local/state/wsh", ""},
		{"XDG_STATE_HOME", overlay, []string{"HOME=" + home, "XDG_STATE_HOME=" + base + "/st"}, nil, home, base + "/st/wsh", ""},
		{"a relative XDG_STATE_HOME is ignored", overlay, []string{"HOME=" + home, "XDG_STATE_HOME=st"}, nil, home, home + "/.local/state/wsh", ""},
		{"readonly", config.Config{Home: config.HomeReadonly}, []string{"HOME=" + home}, nil, home, home + "/.local/state/wsh", "WSH_HOME=readonly"},
		{"in a writable path", overlay, []string{"HOME=" + home}, []string{base}, home, home + "/.local/state/wsh", "lies in the writable path " + base},
		{"the writable path itself", overlay, []string{"HOME=" + home}, []string{home}, home, home + "/.local/state/wsh", "writable"},
		{"unset", overlay, nil, nil, "", "", "HOME is not set"},
		{"empty", overlay, []string{"HOME="}, nil, "", "", "HOME is not set"},
		{"relative", overlay, []string{"HOME=home"}, nil, "", "", "absolute"},
		{"missing", overlay, []string{"HOME=" + base + "/nope"}, nil, "", "", "HOME (" + base + "/nope) does not exist"},
		{"another uid's", overlay, []string{"HOME=" + other}, nil, other, other + "/.local/state/wsh", fmt.Sprintf("HOME (%s) belongs to uid 65534, not to uid %d", other, os.Getuid())},
		{"another uid's, readonly", config.Config{Home: config.HomeReadonly}, []string{"HOME=" + other}, nil, other, other + "/.local/state/wsh", "WSH_HOME=readonly"},
		{"a file", overlay, []string{"HOME=" + file}, nil, "", "", "not a directory"},
		{"the root", overlay, []string{"HOME=/"}, nil, "/", "/.local/state/wsh", "system directory"},
		{"/etc", overlay, []string{"HOME=/etc"}, nil, "/etc", "/etc/.local/state/wsh", "system directory"},
		{"the state directory in a writable path", overlay, []string{"HOME=" + home, "XDG_STATE_HOME=" + base + "/w/st"}, []string{base + "/w"}, home, base + "/w/st/wsh", "lies in the writable path " + base + "/w"},
		{"the state directory, still to be made, beneath a symlink into a writable path", overlay, []string{"HOME=" + home, "XDG_STATE_HOME=" + base + "/towritable/st"}, []string{base + "/w"}, home, base + "/w/st/wsh", "lies in the writable path " + base + "/w"},
		{"a writable path in the state directory", overlay, []string{"HOME=" + home}, []string{home + "/.local/state/wsh/x"}, home, home + "/.local/state/wsh", "state directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, why, _ := PlanHome(tt.cfg, tt.env, tt.writable)
			if plan.Home != tt.home || plan.State != tt.state {
				t.Errorf("plan %+v, want home %q, state %q", plan, tt.home, tt.state)
			}
			if (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("why %q, want %q", why, tt.why)
			}
		})
	}
}

// TestMakeStateRechecks: a state directory that resolves into a writable
// path once made (its parent made a symlink after PlanHome) is refused.
func TestMakeStateRechecks(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(base, "w")
	os.MkdirAll(w, 0o755)
	home := filepath.Join(base, "home")
	os.MkdirAll(home, 0o755)
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + base + "/st"}
	plan, why, _ := PlanHome(config.Config{}, env, []string{w})
	if why != "" {
		t.Fatalf("PlanHome: %s", why)
	}
	if err := os.Symlink(w, filepath.Join(base, "st")); err != nil {
		t.Fatal(err)
	}
	if _, err := MakeState(plan, env, []string{w}); err == nil || !strings.Contains(err.Error(), "lies in the writable path "+w) {
		t.Errorf("MakeState through a new symlink into %s: %v, want refused", w, err)
	}
	os.Remove(filepath.Join(base, "st"))
	got, err := MakeState(plan, env, []string{w})
	if err != nil || got.State != base+"/st/wsh" {
		t.Errorf("MakeState = %q, %v, want %s/st/wsh", got.State, err, base)
	}
}

// TestMakeStateFallsBack: the state directory goes where this uid can
// keep it, a directory of its own: $XDG_STATE_HOME/wsh, then the home's,
// then $XDG_RUNTIME_DIR/wsh when that is private; else no copy-on-write
// home, and the first place's error.
func TestMakeStateFallsBack(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{base}, parts...)...)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	home, blocked, runtime, open := mk("home"), mk("blocked"), mk("run"), mk("open")
	os.WriteFile(filepath.Join(blocked, ".local"), nil, 0o600) // no ~/.local/state
	os.Chmod(open, 0o777)
	others := mk("others", "wsh")
	if err := os.Chown(others, 65534, 65534); err != nil {
		t.Fatalf("a directory of another uid (this test runs as root): %v", err)
	}
	tests := []struct {
		name, home string
		env        []string
		want, err  string
	}{
		{"XDG_STATE_HOME", home, []string{"XDG_STATE_HOME=" + base + "/st"}, base + "/st/wsh", ""},
		{"XDG_STATE_HOME is a file: the home's", home, []string{"XDG_STATE_HOME=" + file}, home + "/.local/state/wsh", ""},
		{"XDG_STATE_HOME/wsh is another uid's: the home's", home, []string{"XDG_STATE_HOME=" + base + "/others"}, home + "/.local/state/wsh", ""},
		{"the home's cannot be made: the runtime directory's", blocked, []string{"XDG_RUNTIME_DIR=" + runtime}, runtime + "/wsh", ""},
		{"a runtime directory others can write is no place", blocked, []string{"XDG_RUNTIME_DIR=" + open}, "", "wsh's state directory: mkdir " + blocked + "/.local: not a directory"},
		{"nowhere: the first place's error", blocked, []string{"XDG_STATE_HOME=" + file}, "", "wsh's state directory: mkdir " + file + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MakeState(launch.HomePlan{Home: tt.home}, tt.env, []string{base + "/w"})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("MakeState: %q, %v; want the error %q", got.State, err, tt.err)
				}
				return
			}
			if err != nil || got.State != tt.want {
				t.Errorf("MakeState: %q, %v; want %q", got.State, err, tt.want)
			}
		})
	}
	if _, err := os.Stat(open + "/wsh"); err == nil {
		t.Errorf("a state directory was made in %s, which others can write", open)
	}
}

// TestCheckPrivate: a state directory must be this uid's, writable by no
// other, and not a symlink.
func TestCheckPrivate(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(base, "own")
	os.Mkdir(own, 0o700)
	groupW := filepath.Join(base, "groupw")
	os.Mkdir(groupW, 0o700)
	os.Chmod(groupW, 0o770)
	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o700)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatalf("a directory of another uid (this test runs as root): %v", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(own, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for p, ok := range map[string]bool{own: true, groupW: false, theirs: false, link: false, file: false} {
		if err := checkPrivate(p); (err == nil) != ok {
			t.Errorf("checkPrivate(%s) = %v, want ok %v", p, err, ok)
		}
	}
}

// TestExistingStates: the jail hides the state directory in use and the
// default one in the home, once they exist.
func TestExistingStates(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	def := filepath.Join(home, ".local", "state", "wsh")
	other := filepath.Join(base, "st", "wsh")
	plan := wrapPlan(home, other)
	if got := ExistingStates(nil, plan); len(got) != 0 {
		t.Errorf("none made: %q", got)
	}
	os.MkdirAll(def, 0o700)
	os.MkdirAll(other, 0o700)
	if got := ExistingStates(nil, plan); strings.Join(got, " ") != other+" "+def {
		t.Errorf("both made: %q, want %q and %q", got, other, def)
	}
	if got := ExistingStates(nil, wrapPlan(home, def)); strings.Join(got, " ") != def {
		t.Errorf("the default in use: %q, want only %q", got, def)
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		`/home/u/data\040disk`: "/home/u/data disk",
		`/a\011b\012c\134d`:    "/a\tb\nc\\d",
		`/plain`:               "/plain",
		`/short\04`:            `/short\04`,
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func wrapPlan(home, state string) launch.HomePlan {
	return launch.HomePlan{Home: home, State: state}
}

// TestNotWritableByDefault: which start directories (and $TMPDIR values)
// are not made writable, and why.
func TestNotWritableByDefault(t *testing.T) {
	home := "/home/u"
	for p, want := range map[string]string{
		"/":                  "system directory",
		"/etc":               "system directory",
		"/etc/cron.d":        "system directory",
		"/usr/local/bin":     "system directory",
		"/usr/lib/systemd":   "system directory",
		"/var/lib":           "system directory",
		"/var":               "system directory",
		"/opt":               "system directory",
		"/home":              "holds the home directory /home/u",
		"/home/u":            "is the home directory",
		"/root":              "where homes are",
		"/var/tmp":           "",
		"/var/tmp/build":     "",
		"/var/www/site":      "",
		"/opt/app":           "",
		"/srv/site":          "",
		"/home/u/src/proj":   "",
		"/tmp/x":             "",
		"/work/main":         "",
		"/etcetera/proj":     "",
		"/home/other/shared": "",
	} {
		got := NotWritableByDefault(p, home)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("NotWritableByDefault(%s) = %q, want %q", p, got, want)
		}
	}
	if got := NotWritableByDefault("/srv", "/srv/u"); !strings.Contains(got, "holds the home") {
		t.Errorf("a directory that holds a home outside /home: %q", got)
	}
}

// TestProjectOf: the project is the start directory, resolved, whatever
// holds a .git above it; its scope differs where the run may do another
// thing (writable paths, network) and where the directory was made again.
func TestProjectOf(t *testing.T) {
	d := t.TempDir()
	repo := filepath.Join(d, "repo")
	sub := filepath.Join(repo, "a", "b")
	for _, p := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "a"), filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	w := []string{"/tmp", sub}
	for dir, want := range map[string]string{sub: sub, repo: repo, filepath.Join(d, "link", "b"): sub} {
		if got, _ := ProjectOf(dir, w, config.Config{Network: config.NetworkNone}); got != want {
			t.Errorf("ProjectOf(%s) = %s, want %s", dir, got, want)
		}
	}
	_, base := ProjectOf(sub, w, config.Config{Network: config.NetworkNone})
	if _, again := ProjectOf(sub, []string{sub, "/tmp"}, config.Config{Network: config.NetworkNone}); again != base {
		t.Errorf("the same writable paths in another order: scope %q, want %q", again, base)
	}
	_, wider := ProjectOf(sub, append(w, repo), config.Config{Network: config.NetworkNone})
	_, netw := ProjectOf(sub, w, config.Config{Network: config.NetworkProxy})
	if err := os.RemoveAll(sub); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, hide := ProjectOf(sub, w, config.Config{Network: config.NetworkNone, Hide: []string{"/etc/x"}})
	_, remade := ProjectOf(sub, w, config.Config{Network: config.NetworkNone})
	for name, sc := range map[string]string{"more writable": wider, "network": netw, "made again": remade, "hidden": hide} {
		if sc == base {
			t.Errorf("%s: the same scope as the run's: %q", name, sc)
		}
	}
}
