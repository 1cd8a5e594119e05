//go:build linux && cgo

package protect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"wsh/internal/paths"

	"golang.org/x/sys/unix"
)

// TestCandidatesNotInHidden: a .git file, directly or through a symlink,
// and a commondir that name a hidden directory give no candidate beneath
// it, and what the hidden directory holds (a worktree's gitdir file
// naming a path in the project) names nothing: wsh does not read it. The
// same gitdir, not hidden, gives both (the control).
func TestCandidatesNotInHidden(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	secret := filepath.Join(proj, "secret")
	victim := filepath.Join(proj, "deep", "victim", ".git") // not a base: two levels down
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(secret, "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(secret, "worktrees", "w", "gitdir"), victim+"\n")
	write(filepath.Join(proj, "a", ".git"), "gitdir: "+secret+"\n")
	write(filepath.Join(proj, "b", ".git", "commondir"), secret+"\n")
	write(filepath.Join(proj, "b", ".git", "HEAD"), "ref: refs/heads/main\n")
	write(victim, "gitdir: "+filepath.Join(proj, "elsewhere")+"\n")
	if err := os.Symlink(secret, filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(proj, "c", ".git"), "gitdir: "+filepath.Join(proj, "link")+"\n")

	for _, hidden := range []bool{true, false} {
		p := NewProtector([]string{root}, []string{proj}, nil, []string{"GIT_CONFIG_NOSYSTEM=1"})
		if hidden {
			p.Hidden = func() []string { return []string{secret} }
		}
		var pr Protection
		cs, err := p.candidates(proj, &pr)
		if err != nil || pr.err != nil {
			t.Fatal(err, pr.err)
		}
		var inSecret, named []string
		for _, c := range cs {
			switch {
			case paths.Under(c.path, secret) || paths.Under(c.path, filepath.Join(proj, "link")):
				inSecret = append(inSecret, c.path)
			case c.path == victim:
				named = append(named, c.path)
			}
		}
		if hidden && len(inSecret)+len(named) > 0 {
			t.Errorf("with %s hidden, candidates in it, or named by what it holds:\n%s", secret, strings.Join(append(inSecret, named...), "\n"))
		}
		if !hidden && (len(inSecret) == 0 || len(named) == 0) {
			t.Errorf("with %s not hidden: candidates in it %q, named by it %q; want both", secret, inSecret, named)
		}
	}
}

// TestUnprivilegedWritable: as root, a directory counts as writable by
// its mode as a capability-less uid 0 would find it; as another user,
// always (the kernel's own check answers).
func TestUnprivilegedWritable(t *testing.T) {
	cases := []struct {
		uid, gid uint32
		mode     uint32
		want     bool
	}{
		{0, 0, 0o755, true},
		{0, 0, 0o555, false},
		{65534, 65534, 0o755, false},
		{65534, 65534, 0o777, true},
		{65534, 0, 0o775, true}, // root's group
		{65534, 65534, 0o1777, true},
	}
	for _, c := range cases {
		st := unix.Stat_t{Uid: c.uid, Gid: c.gid, Mode: unix.S_IFDIR | c.mode}
		want := c.want || os.Geteuid() != 0
		if got := unprivilegedWritable(&st); got != want {
			t.Errorf("uid %d gid %d mode %o: %v, want %v", c.uid, c.gid, c.mode, got, want)
		}
	}
}
