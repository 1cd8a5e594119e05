//go:build linux && cgo

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

// TestWorktreeBackLinkHijack: a command of one run, in a project that has
// nothing to do with another repository's worktree in /tmp, moves that
// worktree away, puts a symlink to its own project in its place and
// copies its .git file: the repository's back link (its gitdir file)
// then leads, through the symlink, to the project. A later run there
// must not get that repository's .git writable. Root and 65534.
func TestWorktreeBackLinkHijack(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			secret := filepath.Join(h.dir, "wt-secret")
			proj := filepath.Join(h.dir, "wt-hijacker")
			feature := tmpName(t, "wsh-e2e-feature-")
			t.Cleanup(func() {
				for _, d := range []string{secret, proj, feature, feature + ".moved"} {
					os.RemoveAll(d)
				}
			})
			mkdirOwned(t, u, secret)
			mkdirOwned(t, u, proj)
			h.hostGit(t, secret, "init", "-q")
			writeOwned(t, u, filepath.Join(secret, "f"), "s\n")
			h.hostGit(t, secret, "add", "f")
			h.hostGit(t, secret, "commit", "-qm", "first")
			h.hostGit(t, secret, "worktree", "add", "-q", feature)
			h.jailIn(t, proj, `g=$(cat `+feature+`/.git) && mv `+feature+` `+feature+`.moved && ln -s "$PWD" `+feature+` && printf '%s\n' "$g" > .git`)
			h.run(t, proj, `touch `+secret+`/.git/objects/pwned; c=$(echo evil | git commit-tree HEAD^{tree}) && git update-ref refs/heads/master $c`)
			if _, err := os.Lstat(filepath.Join(secret, ".git", "objects", "pwned")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a later run wrote the other repository's .git: %v", err)
			}
			if log := h.hostGit(t, secret, "log", "--format=%s", "master"); log != "first\n" {
				t.Errorf("the other repository's master moved: %q", log)
			}
		})
	}
}

// tmpName is a fresh name in /tmp, not made.
func tmpName(t *testing.T, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestWorktreeCommonWhereProgramsRun: a linked worktree of a repository
// that lies where the host runs programs from (a tool directory of the
// home: GOBIN here) does not get that repository's .git writable (a
// commit there could put a program in the host's path on its next
// checkout); wsh says so with the first command. Root and 65534.
func TestWorktreeCommonWhereProgramsRun(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			gobin := filepath.Join(h.dir, "wt-gobin")
			t.Cleanup(func() { os.RemoveAll(gobin) })
			os.RemoveAll(gobin)
			mkdirOwned(t, u, gobin)
			repo, linked := filepath.Join(gobin, "tools"), filepath.Join(h.dir, "wt-gobin-linked")
			t.Cleanup(func() { os.RemoveAll(linked) })
			os.RemoveAll(linked)
			mkdirOwned(t, u, repo)
			h.hostGit(t, repo, "init", "-q")
			writeOwned(t, u, filepath.Join(repo, "f"), "x\n")
			h.hostGit(t, repo, "add", "f")
			h.hostGit(t, repo, "commit", "-qm", "first")
			h.hostGit(t, repo, "worktree", "add", "-q", linked)
			r := h.runEnv(t, linked, []string{"GOBIN=" + gobin}, "touch "+repo+"/.git/objects/planted; echo done")
			if r.status != 0 || r.stdout != "done\n" {
				t.Fatalf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "wsh: the worktree's git directory "+repo+"/.git is not writable in the jail") {
				t.Errorf("not said that the worktree's git directory stays read-only:\n%s", r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(repo, ".git", "objects", "planted")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the repository in GOBIN was written: %v", err)
			}
		})
	}
}

// TestWorktreeSubmodulesReadOnly: from a linked worktree, whose branch's
// .gitmodules need not name the submodules other branches do, the
// repository's modules directory is read-only as a whole: a command
// cannot plant a submodule's gitdir (with its hooks) for the host's next
// git submodule update --init. Root and 65534.
func TestWorktreeSubmodulesReadOnly(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			repo, linked := worktreeRepo(t, h, "wt-modules")
			modules := filepath.Join(repo, ".git", "modules")
			out := h.jailIn(t, linked, "mkdir -p "+modules+"/lib/hooks 2>/dev/null || echo refused")
			if out != "refused\n" {
				t.Errorf("making a submodule's gitdir: %q", out)
			}
			if _, err := os.Lstat(filepath.Join(modules, "lib")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a submodule gitdir was planted on the host: %v", err)
			}
		})
	}
}

// TestWorktreeAddAttribution: a worktree added off the host by a
// background job, while the foreground command ran, is said once, and
// no command's status is changed (which one added it is not known); one
// added by a command started outside the repository (git -C) is caught
// too. Root and 65534.
func TestWorktreeAddAttribution(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			repo, _ := worktreeRepo(t, h, "wt-attr")
			bg, fromTmp := filepath.Join(h.dir, "wt-attr-bg"), filepath.Join(h.dir, "wt-attr-c")
			t.Cleanup(func() {
				os.RemoveAll(bg)
				os.RemoveAll(fromTmp)
			})
			// The foreground command runs until the job's git made the
			// worktree's entry: the two ran side by side.
			r := h.run(t, repo, `git worktree add -q ../wt-attr-bg & sh -c 'while [ ! -e .git/worktrees/wt-attr-bg/gitdir ]; do sleep 0.05; done'; echo "fg $?"; wait $!; echo "bg $?"
cd /tmp && git -C `+repo+` worktree add -q `+fromTmp+`; echo "-C $?"`)
			if r.stdout != "fg 0\nbg 0\n-C 1\n" {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			for _, p := range []string{bg, fromTmp} {
				if n := strings.Count(r.stderr, "wsh: the worktree "+p+" that a command added is not on the host"); n != 1 {
					t.Errorf("%s said %d times:\n%s", p, n, r.stderr)
				}
			}
		})
	}
}

// TestStartBelowRepositoryTop: started in a subdirectory of a repository
// (the repository's top is not writable), git cannot work as outside
// (the full rung's git stops its search at the start directory's bind):
// wsh says why, once, with the first git command, and names the way out.
// Root and 65534.
func TestStartBelowRepositoryTop(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			repo, _ := worktreeRepo(t, h, "wt-below")
			sub := filepath.Join(repo, "sub")
			mkdirOwned(t, u, sub)
			r := h.run(t, sub, "true; git status >/dev/null 2>&1; git log >/dev/null 2>&1; true")
			want := "wsh: the start directory " + sub + " lies in the git repository " + repo + ", which is not writable in the jail"
			if strings.Count(r.stderr, want) != 1 {
				t.Errorf("not said once that the repository is not writable:\n%s", r.stderr)
			}
			if r := h.run(t, repo, "git status >/dev/null"); strings.Contains(r.stderr, "lies in the git repository") || r.status != 0 {
				t.Errorf("started at the repository's top: status %d\n%s", r.status, r.stderr)
			}
		})
	}
}
