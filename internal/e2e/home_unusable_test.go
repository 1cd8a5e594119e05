//go:build linux && cgo

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An unusableHome is a $HOME wsh cannot make a copy-on-write home of, as
// users meet it: `sudo -u nobody` and setpriv keep HOME=/root; nobody's
// passwd entry says /nonexistent; a service account's home belongs to
// root; a broken environment names a file.
type unusableHome struct {
	name string
	u    user
	home func(t *testing.T) string
}

func unusableHomes() []unusableHome {
	return []unusableHome{
		{"nobody/HOME=root", unprivileged, func(*testing.T) string { return "/root" }},
		{"nobody/HOME=nonexistent", unprivileged, func(*testing.T) string { return "/nonexistent" }},
		{"nobody/home-of-root", unprivileged, rootsPrivateHome},
		{"nobody/home-is-a-file", unprivileged, homeFile},
		{"root/home-is-a-file", root, homeFile},
		{"root/home-missing", root, func(t *testing.T) string { return filepath.Join(openDir(t), "missing") }},
	}
}

// openDir is a directory every uid can enter.
func openDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// rootsPrivateHome is a home of root's, mode 0700.
func rootsPrivateHome(t *testing.T) string {
	t.Helper()
	h := filepath.Join(openDir(t), "home")
	if err := os.Mkdir(h, 0o700); err != nil {
		t.Fatal(err)
	}
	return h
}

// homeFile is a home that is a regular file.
func homeFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(openDir(t), "home")
	if err := os.WriteFile(f, []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// homeScript runs several commands: each reads its own status back.
const homeScript = "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; " +
	"cat /proc/self/status >/dev/null; /bin/true; echo done"

// TestHomeUnusable: a home wsh cannot use leaves the jail's home read-only
// (or absent), said once in one sentence that names the home and
// WSH_HOME; the commands run, confined as usual.
func TestHomeUnusable(t *testing.T) {
	for _, c := range unusableHomes() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := c.home(t)
			r := runWsh(t, c.u, workDir(t, c.u), append([]string{"HOME=" + home}, jailEnv...), homeScript)
			if r.status != 0 || !strings.HasSuffix(r.stdout, "done\n") {
				t.Fatalf("HOME=%s as %s: status %d\nstdout:\n%s\nstderr:\n%s", home, c.u.name, r.status, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "NoNewPrivs:") {
				t.Fatalf("HOME=%s as %s: the command did not run\nstdout:\n%s\nstderr:\n%s", home, c.u.name, r.stdout, r.stderr)
			}
			if nnp := statusField(t, r.stdout, "NoNewPrivs"); nnp != "1" {
				t.Errorf("the command's NoNewPrivs is %s, want 1", nnp)
			}
			if sc := statusField(t, r.stdout, "Seccomp"); sc != "2" {
				t.Errorf("the command's Seccomp is %s, want 2 (a filter)", sc)
			}
			checkHomeSentence(t, r.stderr, home)
		})
	}
}

// checkHomeSentence checks that stderr is the one sentence about the home,
// once: it names the home and WSH_HOME.
func checkHomeSentence(t *testing.T, stderr, home string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	switch {
	case len(lines) != 1:
		t.Errorf("want one line on stderr, the home's, got %d:\n%s", len(lines), stderr)
	case !strings.HasPrefix(lines[0], "wsh: the jail's home is read-only: HOME ("+home+") ") &&
		!strings.HasPrefix(lines[0], "wsh: the jail has no home: HOME ("+home+") "):
		t.Errorf("the home's sentence does not say the jail's home is read-only or absent, naming %s:\n%s", home, stderr)
	case !strings.Contains(lines[0], "WSH_HOME=cow"):
		t.Errorf("the home's sentence does not name WSH_HOME=cow:\n%s", stderr)
	}
}

// TestHomeUnusableCow: WSH_HOME=cow asks for the copy-on-write home, so
// a home wsh cannot use is fatal: exit 126, the sentence, nothing runs.
func TestHomeUnusableCow(t *testing.T) {
	for _, c := range unusableHomes() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := c.home(t)
			r := runWsh(t, c.u, workDir(t, c.u), append([]string{"HOME=" + home, "WSH_HOME=cow"}, jailEnv...), "echo ran; true")
			if r.status != 126 || r.stdout != "" {
				t.Errorf("HOME=%s WSH_HOME=cow as %s: status %d, stdout %q; want 126 and nothing run\nstderr:\n%s", home, c.u.name, r.status, r.stdout, r.stderr)
			}
			if want := "WSH_HOME=cow requires a copy-on-write home, and there is none: HOME (" + home + ") "; strings.Count(r.stderr, want) != 1 {
				t.Errorf("stderr does not say once %q:\n%s", want, r.stderr)
			}
		})
	}
}

// TestHomeCowUsable: WSH_HOME=cow with a home wsh can use is the
// copy-on-write home, as overlay gives it.
func TestHomeCowUsable(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			r := runWsh(t, u, h.proj, append(h.env("WSH_HOME=cow"), jailEnv...), "cat /proc/self/mountinfo")
			if r.status != 0 || r.stderr != "" {
				t.Fatalf("WSH_HOME=cow with the home of %s: status %d\n%s", u.name, r.status, r.stderr)
			}
			if m := mountAt(t, r.stdout, h.dir); m.fstype != "overlay" {
				t.Errorf("the jail's home is %s (%s), want the overlay", m.fstype, m.super)
			}
		})
	}
}

// TestHomeCowDegraded: a host that refuses the full jail gives a lower
// rung, which has no copy-on-write home: with WSH_HOME=cow nothing runs.
func TestHomeCowDegraded(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			r := runHostile(t, u, h.proj, h.env("WSH_HOME=cow"), cloneEPERM.arg, "echo ran; /bin/true")
			want := "WSH_HOME=cow requires a copy-on-write home, and there is none: the host refuses the full jail, and the landlock rung has no copy-on-write home"
			if r.status != 126 || r.stdout != "" || !strings.Contains(r.stderr, want) {
				t.Errorf("status %d, stdout %q; want 126, nothing run and %q\nstderr:\n%s", r.status, r.stdout, want, r.stderr)
			}
		})
	}
}

// TestHomeStateFallsBack: a home whose ~/.local belongs to root (as
// `sudo pip install --user` leaves it) has no place for wsh's state; wsh
// keeps it in $XDG_RUNTIME_DIR/wsh, covered in the jail, or, without a
// runtime directory, gives a read-only home and says why.
func TestHomeStateFallsBack(t *testing.T) {
	u := unprivileged
	// Outside /tmp: a home or state directory in a writable path is not
	// copy-on-write whatever else holds.
	base, err := os.MkdirTemp("/home", "wsh-e2e-fallback-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home, runtime := filepath.Join(base, "home"), filepath.Join(base, "run")
	for _, d := range []string{home, runtime} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		mustChown(t, d, u.uid)
	}
	if err := os.Mkdir(filepath.Join(home, ".local"), 0o755); err != nil { // root's
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The keeper of the jail's home may still hold it.
		wshCmd(context.Background(), u, home, []string{"XDG_RUNTIME_DIR=" + runtime}, "home", "reset").Run()
		os.RemoveAll(base)
	})
	proj := workDir(t, u)
	env := append([]string{"HOME=" + home, "XDG_RUNTIME_DIR=" + runtime}, jailEnv...)
	r := runWsh(t, u, proj, env, "cat /proc/self/mountinfo; echo x > ~/written")
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("status %d\n%s", r.status, r.stderr)
	}
	if m := mountAt(t, r.stdout, home); m.fstype != "overlay" || !strings.Contains(m.super, "upperdir="+runtime+"/wsh/") {
		t.Errorf("the jail's home is %s (%s), want an overlay kept in %s/wsh", m.fstype, m.super, runtime)
	}
	if s := mountAt(t, r.stdout, runtime+"/wsh"); s.fstype != "tmpfs" || !strings.HasPrefix(s.opts, "ro") {
		t.Errorf("wsh's state directory is %s %s in the jail, want covered (a read-only tmpfs)", s.fstype, s.opts)
	}
	if _, err := os.Lstat(filepath.Join(home, "written")); err == nil {
		t.Errorf("~/written, written in the jail, is on the host")
	}
	r = runWsh(t, u, proj, append([]string{"HOME=" + home}, jailEnv...), "/bin/true; /bin/true")
	want := "wsh: the jail's home is read-only: wsh's state directory: mkdir " + home + "/.local/state: permission denied; WSH_HOME=readonly says so without this note, WSH_HOME=cow makes it an error\n"
	if r.status != 0 || r.stderr != want {
		t.Errorf("without a runtime directory: status %d, stderr\n%s\nwant\n%s", r.status, r.stderr, want)
	}
}

// TestHomeUnusableLowerRungs: on a host that refuses the full jail, a
// home wsh cannot use does not stop the lower rungs either: the commands
// run, confined, after the ladder's one warning.
func TestHomeUnusableLowerRungs(t *testing.T) {
	for _, m := range []hostileMode{cloneEPERM, mountEACCES} {
		t.Run(m.name(), func(t *testing.T) {
			u := unprivileged
			r := runHostile(t, u, workDir(t, u), []string{"HOME=/root"}, m.arg, homeScript)
			if r.status != 0 || !strings.Contains(r.stdout, "NoNewPrivs:") {
				t.Fatalf("HOME=/root as nobody, hostile %s: status %d\nstdout:\n%s\nstderr:\n%s", m.arg, r.status, r.stdout, r.stderr)
			}
			if nnp, sc := statusField(t, r.stdout, "NoNewPrivs"), statusField(t, r.stdout, "Seccomp"); nnp != "1" || sc != "2" {
				t.Errorf("the command's NoNewPrivs %s, Seccomp %s; want 1 and 2", nnp, sc)
			}
			if n := strings.Count(r.stderr, "\n"); n != 1 || !strings.HasPrefix(r.stderr, warningPrefix) {
				t.Errorf("want the ladder's one warning and nothing else on stderr:\n%s", r.stderr)
			}
		})
	}
}

// TestHomeUnusableHomeAndDoctor: wsh home and wsh doctor, with a home wsh
// cannot use, say the jail's home is read-only and why, and do not fail;
// with WSH_HOME=cow, doctor says wsh would not start.
func TestHomeUnusableHomeAndDoctor(t *testing.T) {
	u := unprivileged
	dir := workDir(t, u)
	env := []string{"HOME=/root"}
	why := "HOME (/root) belongs to uid 0, not to uid 65534"
	ctx := t.Context()
	out, err := wshCmd(ctx, u, dir, env, "home").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "The jail's $HOME is not copy-on-write here: "+why+".\n") {
		t.Errorf("wsh home: %v\n%s", err, out)
	}
	type doctor struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
		Home    *struct {
			Mode string `json:"mode"`
			Why  string `json:"why"`
		} `json:"home"`
	}
	for _, c := range []struct {
		env     []string
		verdict string
		status  int
	}{{env, "confined", 0}, {append(env, "WSH_HOME=cow"), "would-fail", 3}} {
		cmd := wshCmd(ctx, u, dir, c.env, "doctor", "--json")
		b, _ := cmd.Output()
		var d doctor
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("wsh doctor --json with %q: %v\n%s", c.env, err, b)
		}
		if d.Verdict != c.verdict || cmd.ProcessState.ExitCode() != c.status || d.Home == nil || d.Home.Mode != "readonly" || d.Home.Why != why {
			t.Errorf("wsh doctor with %q: exit %d, %s\n%s", c.env, cmd.ProcessState.ExitCode(), b, d.Reason)
		}
	}
}
