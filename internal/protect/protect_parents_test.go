//go:build linux && cgo

package protect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestParentCandidates: the parent names are candidates, with the kind
// the table gives, in each writable path and each directory above the
// start directory in one, and not in the start directory, beneath it (a
// writable path there included), the home, or a hidden directory.
func TestParentCandidates(t *testing.T) {
	tmp := t.TempDir()
	x, work := filepath.Join(tmp, "x"), filepath.Join(tmp, "x", "work")
	proj := filepath.Join(work, "proj")
	inProj, other, home := filepath.Join(proj, "cache"), filepath.Join(tmp, "other"), filepath.Join(tmp, "home")
	for _, d := range []string{inProj, other, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	roots := []string{tmp, proj, inProj, other, home}
	p := NewProtector(roots, []string{proj, inProj, other, home}, nil, []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + home})
	p.Start = proj
	p.Hidden = func() []string { return []string{other} }
	var pr Protection
	cs, err := p.candidates(proj, &pr)
	if err != nil || pr.err != nil {
		t.Fatal(err, pr.err)
	}
	got := map[string]placeholder{}
	for _, c := range cs {
		got[c.path] = c.make
	}
	for _, n := range parentNames {
		for _, d := range []string{tmp, x, work} {
			if k, ok := got[filepath.Join(d, n.name)]; !ok || k != n.make {
				t.Errorf("%s in %s: candidate %v, made as %d; want made as %d", n.name, d, ok, k, n.make)
			}
		}
		for _, d := range []string{proj, inProj, other, home} {
			if d == home && homeToolFiles[n.name] == got[filepath.Join(d, n.name)] {
				continue // the home's own (protect_home.go): .npmrc
			}
			if k := got[filepath.Join(d, n.name)]; k != makeNone && !slices.Contains([]string{".claude", ".codex", ".gemini"}, n.name) {
				t.Errorf("%s in %s (not above the start directory): made as %d", n.name, d, k)
			}
		}
	}
}

// TestParentCandidatesNotInTheRepository: a start directory inside a
// repository (a monorepo's packages/web) leaves the repository's own
// names to it, up to its root, and so does a WSH_WRITABLE project; above
// the repository, and in /tmp, they are protected.
func TestParentCandidatesNotInTheRepository(t *testing.T) {
	tmp := t.TempDir()
	above := filepath.Join(tmp, "above")
	mono := filepath.Join(above, "mono")
	web, lib := filepath.Join(mono, "packages", "web"), filepath.Join(tmp, "lib")
	for _, d := range []string{filepath.Join(mono, ".git", "objects"), web, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := NewProtector([]string{tmp, web, lib}, []string{web, lib}, nil, []string{"GIT_CONFIG_NOSYSTEM=1"})
	p.Start = web
	var pr Protection
	cs, err := p.candidates(web, &pr)
	if err != nil || pr.err != nil {
		t.Fatal(err, pr.err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		got[c.path] = c.make != makeNone
	}
	for d, want := range map[string]bool{tmp: true, above: true, mono: false, filepath.Join(mono, "packages"): false, web: false, lib: false} {
		if made := got[filepath.Join(d, "pytest.ini")]; made != want {
			t.Errorf("pytest.ini in %s: made %v, want %v", d, made, want)
		}
	}
}

// TestParentCandidatesInTheHome: a home that is /tmp itself, or lies in
// /tmp above the start directory (HOME=/tmp/h, started in /tmp/h/proj),
// gets the parent names as any directory there (the review of the whole:
// they were left out of the home).
func TestParentCandidatesInTheHome(t *testing.T) {
	tmp := t.TempDir()
	h := filepath.Join(tmp, "h")
	proj := filepath.Join(h, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, home := range []string{tmp, h} {
		p := NewProtector([]string{tmp, proj}, []string{proj}, nil, []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + home})
		p.Start = proj
		var pr Protection
		cs, err := p.candidates(proj, &pr)
		if err != nil || pr.err != nil {
			t.Fatal(err, pr.err)
		}
		got := map[string]placeholder{}
		for _, c := range cs {
			got[c.path] = c.make
		}
		for _, n := range []string{"conftest.py", "node_modules", "go.work", "rust-toolchain.toml", "CLAUDE.md"} {
			for _, d := range []string{tmp, h} {
				if k := got[filepath.Join(d, n)]; k != parentKind(n) {
					t.Errorf("HOME=%s: %s in %s made as %d, want %d", home, n, d, k, parentKind(n))
				}
			}
		}
	}
}
