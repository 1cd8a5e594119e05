//go:build linux && cgo

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests are issue 38's second case, "redirecting the next run": a
// command of one run renames a project away and leaves a symlink at its
// path (or at $TMPDIR's) to the home's ~/.cargo/bin; the next run started
// at that path must not make the target its writable start directory (or
// TMPDIR), where a command would write a `cargo` the host then runs.

// groundHome is a home for u outside the temporary directories (a jail
// can write in those, and so could have laid a symlink there), with an
// empty .cargo/bin that PATH lists first, as rustup's profile has it.
type groundHome struct {
	dir, bin string
	env      []string
}

func newGroundHome(t *testing.T, u user) groundHome {
	t.Helper()
	dir, err := os.MkdirTemp("/home", "wsh-e2e-ground-"+u.name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h := groundHome{dir: dir, bin: filepath.Join(dir, ".cargo", "bin")}
	if err := os.MkdirAll(h.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, ".cargo"), h.bin} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if u.uid >= 0 {
			if err := os.Chown(d, u.uid, u.uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	// WSH_HOME=readonly: the copy-on-write home would keep state in it
	// that only wsh home reset removes; it plays no part here.
	h.env = []string{"HOME=" + dir, "PATH=" + h.bin + ":/usr/local/bin:/usr/bin:/bin", "WSH_HOME=readonly"}
	return h
}

// plant runs, as u in a directory of its own, a jailed command that
// renames the directory at p away and leaves a symlink to target in its
// place, and checks on the host that it did.
func plant(t *testing.T, u user, env []string, p, target string) {
	t.Helper()
	script := `mv "$P" "$P.away" && ln -s "$T" "$P"`
	mustRun(t, u, workDir(t, u), append([]string{"P=" + p, "T=" + target}, env...), script)
	if to, err := os.Readlink(p); err != nil || to != target {
		t.Fatalf("the jailed command did not leave the symlink %s -> %s: %q, %v", p, target, to, err)
	}
}

// wantRefused checks that r is wsh refusing to start with a sentence that
// holds each of says, and that the target lists as before.
func wantRefused(t *testing.T, r result, target, before string, says ...string) {
	t.Helper()
	if r.status != 126 {
		t.Errorf("status %d, want 126\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	for _, s := range says {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
		}
	}
	if now := listing(t, target); now != before {
		t.Errorf("the target's listing changed\nbefore:\n%s\nafter:\n%s", before, now)
	}
}

// The script of the redirected run: what a command would do there.
const plantCargo = `printf '#!/bin/sh\necho pwned\n' > "${W:-.}/cargo" && chmod +x "${W:-.}/cargo"`

func TestGroundStartDirRedirected(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := newGroundHome(t, u)
			proj := filepath.Join(workDir(t, u), "proj")
			if err := os.Mkdir(proj, 0o755); err != nil {
				t.Fatal(err)
			}
			chownTo(t, u, proj)
			plant(t, u, h.env, proj, h.bin)
			before := listing(t, h.bin)
			// Started at the project's path as a shell's cd leaves it
			// (PWD names it): wsh sees the symlink.
			r := runWsh(t, u, proj, append([]string{"PWD=" + proj}, h.env...), plantCargo)
			wantRefused(t, r, h.bin, before, "wsh: refusing to start: the start directory "+proj+" goes through the symlink "+proj+" (-> "+h.bin+")")
			// Started there by a program that sets no PWD: wsh sees only
			// where the symlink led.
			r = runWsh(t, u, proj, h.env, plantCargo)
			wantRefused(t, r, h.bin, before, "wsh: refusing to start: the start directory "+h.bin+" is a directory of PATH; wsh never makes writable a directory the host runs programs from")
		})
	}
}

func TestGroundTmpdirRedirected(t *testing.T) { // and WSH_WRITABLE
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := newGroundHome(t, u)
			tmp := filepath.Join(workDir(t, u), "tmp")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			chownTo(t, u, tmp)
			plant(t, u, h.env, tmp, h.bin)
			before := listing(t, h.bin)
			r := runWsh(t, u, workDir(t, u), append([]string{"TMPDIR=" + tmp, "W=" + tmp}, h.env...), plantCargo)
			wantRefused(t, r, h.bin, before, "wsh: refusing to start: TMPDIR "+tmp+" goes through the symlink "+tmp+" (-> "+h.bin+")")
			// The same symlink named in WSH_WRITABLE.
			r = runWsh(t, u, workDir(t, u), append([]string{"WSH_WRITABLE=" + tmp, "W=" + tmp}, h.env...), plantCargo)
			wantRefused(t, r, h.bin, before, "wsh: refusing to start: the WSH_WRITABLE path "+tmp+" goes through the symlink "+tmp+" (-> "+h.bin+")")
		})
	}
}

// The control: a project the user reaches through a symlink of their own,
// in the home itself (which no jail writes: it gets a copy-on-write or a
// read-only home), runs as ever, and its command writes on the host.
func TestGroundUsersOwnSymlinkRuns(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := newGroundHome(t, u)
			real := workDir(t, u)
			link := filepath.Join(h.dir, "work")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			mustRun(t, u, link, append([]string{"PWD=" + link}, h.env...), `echo made > made`)
			if b, err := os.ReadFile(filepath.Join(real, "made")); err != nil || string(b) != "made\n" {
				t.Errorf("the command's file on the host: %q, %v", b, err)
			}
		})
	}
}

func chownTo(t *testing.T, u user, p string) {
	t.Helper()
	if u.uid >= 0 {
		if err := os.Chown(p, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
}
