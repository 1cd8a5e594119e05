package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostGit runs git as the home's user on the host, in dir, and returns
// its output; a failure fails the test.
func (h *realHome) hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := h.hostCmd(dir, []string{"GIT_CONFIG_NOSYSTEM=1"}, "git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v on the host, in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// worktreeRepo makes, on the host, as the home's user, a repository in
// the home (name) with one commit, and a linked worktree of it beside it
// (name-wt); both are removed at the test's end.
func worktreeRepo(t *testing.T, h *realHome, name string) (repo, linked string) {
	t.Helper()
	repo, linked = filepath.Join(h.dir, name), filepath.Join(h.dir, name+"-wt")
	t.Cleanup(func() {
		os.RemoveAll(repo)
		os.RemoveAll(linked)
	})
	for _, d := range []string{repo, linked} {
		os.RemoveAll(d)
	}
	mkdirOwned(t, h.u, repo)
	h.hostGit(t, repo, "init", "-q")
	writeOwned(t, h.u, filepath.Join(repo, "f"), "x\n")
	h.hostGit(t, repo, "add", "f")
	h.hostGit(t, repo, "commit", "-qm", "first")
	h.hostGit(t, repo, "worktree", "add", "-q", linked)
	return repo, linked
}

// TestLinkedWorktreeCommits: wsh started in a linked worktree, under a
// real home, commits to the host's repository (its index and HEAD are in
// .git/worktrees/NAME, its objects and refs in the common .git, both
// outside the worktree), while the common directory's hooks and config
// stay read-only. Before, the commit landed in the jail's copy-on-write
// home: the host's git never saw it. Root and 65534.
func TestLinkedWorktreeCommits(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			repo, linked := worktreeRepo(t, h, "wt-commit")
			common := filepath.Join(repo, ".git")
			cfgBefore, err := os.ReadFile(filepath.Join(common, "config"))
			if err != nil {
				t.Fatal(err)
			}
			out := h.jailIn(t, linked, `echo y > g && git add g && git commit -qm jailed && echo committed
echo 'exit 0' > `+common+`/hooks/pre-commit || echo hook refused
echo '[core]' >> `+common+`/config || echo config refused`)
			if out != "committed\nhook refused\nconfig refused\n" {
				t.Errorf("in the jail: %q", out)
			}
			if log := h.hostGit(t, repo, "log", "--format=%s", "--all"); !strings.Contains(log, "jailed") {
				t.Errorf("the commit made in the jail is not in the host's repository:\n%s", log)
			}
			if st := h.hostGit(t, linked, "status", "--porcelain"); st != "" {
				t.Errorf("the host's worktree is not clean after the jail's commit:\n%s", st)
			}
			if _, err := os.Lstat(filepath.Join(common, "hooks", "pre-commit")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a hook was written to the host's common .git/hooks: %v", err)
			}
			if cfg, err := os.ReadFile(filepath.Join(common, "config")); err != nil || string(cfg) != string(cfgBefore) {
				t.Errorf("the host's config changed: %q, %v", cfg, err)
			}
			// A .git file that names the worktree's gitdir, whose gitdir
			// file does not name it back: nothing of the repository is
			// writable from there (a command can write such a file).
			impostor := filepath.Join(h.dir, "wt-commit-impostor")
			t.Cleanup(func() { os.RemoveAll(impostor) })
			mkdirOwned(t, u, impostor)
			gitFile, err := os.ReadFile(filepath.Join(linked, ".git"))
			if err != nil {
				t.Fatal(err)
			}
			writeOwned(t, u, filepath.Join(impostor, ".git"), string(gitFile))
			h.jailIn(t, impostor, "touch "+common+"/objects/impostor; true")
			if _, err := os.Lstat(filepath.Join(common, "objects", "impostor")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a .git file the gitdir does not name back made the common directory writable: %v", err)
			}
		})
	}
}

// TestWorktreeAddOutsideWritable: git worktree add to a path outside the
// writable paths (beside the project, in the home) would land in the
// jail's copy-on-write home, where the host never sees it (its git lists
// it prunable): the command fails (status 1) and wsh says why; one added
// inside the project is on the host. Root and 65534.
func TestWorktreeAddOutsideWritable(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			repo, _ := worktreeRepo(t, h, "wt-add")
			outside := filepath.Join(h.dir, "wt-add-outside")
			t.Cleanup(func() { os.RemoveAll(outside) })
			r := h.run(t, repo, `git worktree add -q ../wt-add-outside; echo "outside $?"
git worktree add -q inside; echo "inside $?"`)
			if r.stdout != "outside 1\ninside 0\n" {
				t.Errorf("stdout %q, want the outside add to fail and the inside one to work\n%s", r.stdout, r.stderr)
			}
			want := "wsh: the worktree " + outside + " that a command added is not on the host"
			if strings.Count(r.stderr, want) != 1 {
				t.Errorf("not said once that the worktree is not on the host:\n%s", r.stderr)
			}
			if _, err := os.Stat(filepath.Join(repo, "inside", "f")); err != nil {
				t.Errorf("the worktree added inside the project is not on the host: %v", err)
			}
		})
	}
}
