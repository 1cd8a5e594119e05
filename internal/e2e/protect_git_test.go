//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitAs runs the host's git in dir as u, unconfined, and fails the test
// when it fails.
func gitAs(t *testing.T, u user, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=host", "-c", "user.email=h@example.invalid"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// mkdirAllOwned makes path and its missing parents beneath base, owned by u.
func mkdirAllOwned(t *testing.T, u user, base, rel string) string {
	t.Helper()
	cur := base
	for _, c := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, c)
		if _, err := os.Lstat(cur); err == nil {
			continue
		}
		mkdirOwned(t, u, cur)
	}
	return cur
}

// TestProtectedGitIndirections: what sends the host's git to code a
// command wrote, beyond .git/config and .git/hooks, stays read-only: a
// submodule's gitdir at any depth beneath .git/modules, the directory
// core.hooksPath names in the working tree (husky's layout too), a
// repository above the start directory, and a repository one level below
// whose hooks directory was missing. Each is read back on the host.
func TestProtectedGitIndirections(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			md := t.TempDir()
			os.Chmod(md, 0o777)
			mark := filepath.Join(md, "planted")
			hook := `printf "#!/bin/sh\ntouch %s\n" "$MARK" > `
			env := []string{"MARK=" + mark}

			t.Run("a submodule's gitdir two levels down", func(t *testing.T) {
				dir := hostRepo(t, u)
				sub := mkdirAllOwned(t, u, dir, ".git/modules/libs/sub")
				writeOwned(t, u, filepath.Join(sub, "HEAD"), "ref: refs/heads/master\n")
				writeOwned(t, u, filepath.Join(sub, "config"), "[core]\n\tbare = false\n")
				mkdirOwned(t, u, filepath.Join(sub, "hooks"))
				out := mustJail(t, u, dir, env, `sh -c 'printf "[core]\n\tfsmonitor = touch %s\n" "$MARK" >> .git/modules/libs/sub/config' 2>&1; sh -c '`+hook+`.git/modules/libs/sub/hooks/post-checkout' 2>&1; true`)
				if b, _ := os.ReadFile(filepath.Join(sub, "config")); strings.Contains(string(b), "fsmonitor") {
					t.Errorf("the submodule's config changed on the host:\n%s\n%s", b, out)
				}
				if _, err := os.Lstat(filepath.Join(sub, "hooks", "post-checkout")); err == nil {
					t.Errorf("a hook was planted in the submodule's gitdir:\n%s", out)
				}
			})

			for _, hp := range []string{".husky", ".husky/_"} {
				t.Run("core.hooksPath "+hp, func(t *testing.T) {
					dir := hostRepo(t, u)
					mkdirAllOwned(t, u, dir, hp)
					gitAs(t, u, dir, "config", "core.hooksPath", hp)
					out := mustJail(t, u, dir, env, `sh -c '`+hook+hp+`/pre-commit && chmod +x `+hp+`/pre-commit' 2>&1; sh -c '`+hook+`.husky/pre-commit' 2>&1; true`)
					for _, f := range []string{hp + "/pre-commit", ".husky/pre-commit"} {
						if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
							t.Errorf("%s was written on the host:\n%s", f, out)
						}
					}
					os.WriteFile(filepath.Join(dir, "g"), []byte("y\n"), 0o644)
					gitAs(t, u, dir, "add", "g")
					gitAs(t, u, dir, "commit", "-qm", "host")
					if _, err := os.Stat(mark); err == nil {
						t.Errorf("the host's git commit ran a hook planted in the jail")
					}
				})
			}

			t.Run("a repository above the start directory", func(t *testing.T) {
				dir := hostRepo(t, u)
				src := mkdirAllOwned(t, u, dir, "src")
				// HOME elsewhere: the start directory is then a writable
				// path of its own, the nearest to the working directory.
				out := mustJail(t, u, src, append(env, "HOME="+md), `/bin/sh -c '`+hook+`../.git/hooks/pre-commit' 2>&1; /bin/sh -c 'echo "[core]" >> ../.git/config' 2>&1; true`)
				if _, err := os.Lstat(filepath.Join(dir, ".git", "hooks", "pre-commit")); err == nil {
					t.Errorf("a hook was planted in the repository above the start directory:\n%s", out)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Count(string(b), "[core]") != 1 {
					t.Errorf("the config of the repository above the start directory changed:\n%s", b)
				}
			})

			t.Run("a repository below, its hooks missing", func(t *testing.T) {
				parent := workDir(t, u)
				repo := hostRepo(t, u)
				sub := filepath.Join(parent, "sub")
				if err := os.Rename(repo, sub); err != nil {
					t.Fatal(err)
				}
				os.RemoveAll(filepath.Join(sub, ".git", "hooks"))
				out := mustJail(t, u, parent, env, `sh -c 'mkdir -p sub/.git/hooks && `+hook+`sub/.git/hooks/pre-commit' 2>&1; true`)
				if _, err := os.Lstat(filepath.Join(sub, ".git", "hooks", "pre-commit")); err == nil {
					t.Errorf("a hook was planted in a repository below whose hooks were missing:\n%s", out)
				}
			})
		})
	}
}

// TestProtectedTooManyRepositories: a command that makes more
// repositories below the start directory than wsh protects cannot so push
// the real one out: later commands do not run, and say why.
func TestProtectedTooManyRepositories(t *testing.T) {
	u := users[0]
	parent := workDir(t, u)
	repo := hostRepo(t, u)
	zeta := filepath.Join(parent, "zeta")
	if err := os.Rename(repo, zeta); err != nil {
		t.Fatal(err)
	}
	r := runWsh(t, u, parent, jailEnv, `/bin/sh -c 'i=0; while [ $i -lt 1100 ]; do mkdir -p a$i/.git; i=$((i+1)); done'; /bin/sh -c 'echo x > zeta/.git/hooks/pre-commit'; echo "status $?"`)
	if _, err := os.Lstat(filepath.Join(zeta, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("with 1100 repositories beside it, a hook was planted:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "status 126") || !strings.Contains(r.stderr, fmt.Sprintf("%s holds 1101 repositories", parent)) {
		t.Errorf("with 1100 repositories beside it: %s%s", r.stdout, r.stderr)
	}
}

// TestProtectedMissingFileMade: a protected file that was missing, and
// that wsh does not make (a name WSH_PROTECT adds: wsh cannot tell what
// a placeholder would break), can be made by a command in the jail, and by
// the shell's own redirection, done there; wsh says so once, after the
// command or the redirection, and the next jail keeps it read-only.
func TestProtectedMissingFileMade(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := hostRepo(t, u)
			env := append([]string{"WSH_PROTECT=.env"}, jailEnv...)
			made := filepath.Join(dir, ".env")
			r := runWsh(t, u, dir, env, `sh -c 'echo "K=1" > .env'; /bin/true`)
			if strings.Count(r.stderr, "wsh: a command made "+made+", a protected path that was missing") != 1 {
				t.Errorf("a missing .env made by a command: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			os.Remove(made)
			r = runWsh(t, u, dir, env, `echo 'K=1' > .env; echo "in process $?"; sh -c 'echo "K=2" > .env'; /bin/true`)
			if !strings.Contains(r.stdout, "in process 0") || strings.Count(r.stderr, "wsh: the shell's redirection made "+made+", a protected path that was missing") != 1 ||
				!strings.Contains(r.stderr, ".env: Read-only file system") {
				t.Errorf("a missing .env made by the shell: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			r = runWsh(t, u, dir, env, `/bin/true`)
			if strings.Contains(r.stderr, "a command made") {
				t.Errorf("an existing .env is said to be made: %s", r.stderr)
			}
		})
	}
}

// swapScript exchanges the directory x and the symlink xl (to .git) with
// renameat2(RENAME_EXCHANGE) for the given seconds: a path the shell
// resolved as x/config is, a moment later, .git/config.
const swapScript = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    libc.renameat2(-100, b"x", -100, b"xl", 2)
    n += 1
print(n, file=sys.stderr)
`

// TestProtectedInProcessRace: the shell's own redirection checks the path
// it resolved, then opens it following no symlink: a jailed job that swaps
// a directory for a symlink to .git in between cannot lead the write to
// .git/config.
func TestProtectedInProcessRace(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("this test needs python3: %v", err)
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := hostRepo(t, u)
			writeOwned(t, u, filepath.Join(dir, "swap.py"), swapScript)
			r := runWsh(t, u, dir, jailEnv, `mkdir x && ln -s .git xl
python3 swap.py 4 & sleep 0.3
i=0; while [ $i -lt 3000 ]; do printf '[core]\n\tfsmonitor = touch PLANTED\n' >> x/config 2>/dev/null; i=$((i+1)); done
wait`)
			b, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
			if strings.Contains(string(b), "PLANTED") {
				t.Errorf("the shell's redirection, raced, wrote .git/config:\n%s\n%s", b, r.stderr)
			}
			if w, _ := os.ReadFile(filepath.Join(dir, "x", "config")); !strings.Contains(string(w), "PLANTED") {
				if w2, _ := os.ReadFile(filepath.Join(dir, "xl", "config")); !strings.Contains(string(w2), "PLANTED") {
					t.Errorf("no write landed in x at all: the race did not run\n%s", r.stderr)
				}
			}
		})
	}
}

// TestProtectedReview4: what the fourth review broke, each read back on
// the host after the jailed script: the hook or config it tried to plant
// is not there, or wsh said what the command changed.
func TestProtectedReview4(t *testing.T) {
	hook := `printf "#!/bin/sh\ntouch PLANTED\n" > `
	runProtectCases(t, []protectCase{
		{"chmod 000 .git, then put it back", 1, nil,
			`chmod 000 .git; /bin/true; sh -c 'chmod 755 .git && printf "[core]\n\tfsmonitor = touch PLANTED\n" >> .git/config'; chmod 755 .git`,
			func(t *testing.T, dir string, r result) {
				if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Contains(string(b), "PLANTED") {
					t.Errorf(".git/config planted:\n%s%s", b, r.stderr)
				}
				if !strings.Contains(r.stderr, "cannot check the protected paths") {
					t.Errorf("no command refused:\n%s", r.stderr)
				}
			}, ""},
		{".git/hooks a symlink, pointed elsewhere", -1,
			func(t *testing.T, u user, dir string) {
				os.Rename(filepath.Join(dir, ".git", "hooks"), filepath.Join(dir, "githooks"))
				os.Symlink("../githooks", filepath.Join(dir, ".git", "hooks"))
			},
			`sh -c '` + hook + `githooks/pre-commit' 2>/dev/null; mkdir -p evil && sh -c 'ln -sfn ../evil .git/hooks' 2>/dev/null; /bin/true`,
			func(t *testing.T, dir string, r result) {
				if _, err := os.Lstat(filepath.Join(dir, "githooks", "pre-commit")); err == nil {
					t.Errorf("a hook was planted in the symlinked hooks directory")
				}
				if !strings.Contains(r.stderr, "wsh: a command changed the symlink "+filepath.Join(dir, ".git", "hooks")) {
					t.Errorf("the symlink pointed elsewhere is not said:\n%s", r.stderr)
				}
			}, ""},
		{"a hook that is a symlink into the working tree", -1,
			func(t *testing.T, u user, dir string) {
				writeOwned(t, u, filepath.Join(dir, "pre-commit.sh"), "#!/bin/sh\n")
				os.Symlink("../../pre-commit.sh", filepath.Join(dir, ".git", "hooks", "pre-commit"))
			},
			`sh -c 'echo "touch PLANTED" >> pre-commit.sh' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				if b, _ := os.ReadFile(filepath.Join(dir, "pre-commit.sh")); strings.Contains(string(b), "PLANTED") {
					t.Errorf("the hook's target in the working tree was changed")
				}
			}, ""},
		{"a submodule's .git file", -1,
			func(t *testing.T, u user, dir string) {
				sub := mkdirAllOwned(t, u, dir, ".git/modules/libs/sub")
				writeOwned(t, u, filepath.Join(sub, "HEAD"), "ref: refs/heads/master\n")
				writeOwned(t, u, filepath.Join(sub, "config"), "[core]\n\tworktree = ../../../../libs/sub\n")
				mkdirAllOwned(t, u, dir, "libs/sub")
				writeOwned(t, u, filepath.Join(dir, "libs", "sub", ".git"), "gitdir: ../../.git/modules/libs/sub\n")
			},
			`sh -c 'echo "gitdir: ../../evilgit" > libs/sub/.git' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				if b, _ := os.ReadFile(filepath.Join(dir, "libs", "sub", ".git")); strings.Contains(string(b), "evil") {
					t.Errorf("the submodule's .git file was pointed elsewhere")
				}
			}, ""},
		{"a background job's file, at exit", -1, nil,
			// Only builtins after the job: no later command's check sees
			// the file; the Runner's Close must.
			// (.config/fish: a name wsh makes no placeholder for, as its
			// .config would be one too.)
			`sh -c 'mkdir -p .config/fish; sleep 100' & i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done`,
			func(t *testing.T, dir string, r result) {
				if !strings.Contains(r.stderr, "wsh: a command made "+filepath.Join(dir, ".config/fish")) {
					t.Errorf("the background job's .mcp.json is not said:\n%s", r.stderr)
				}
			}, ""},
	})
}

// A protectCase is an attempt on the protected paths of a repository the
// host made (hostRepo), read back on the host after the jailed script.
type protectCase struct {
	name   string
	only   int                                    // -1: every user; else the index in users
	setup  func(t *testing.T, u user, dir string) // on the host, before
	script string
	check  func(t *testing.T, dir string, r result)
	in     string // the script runs in dir+in (a sibling the setup made), not dir
}

func runProtectCases(t *testing.T, cases []protectCase) {
	for ui, u := range users {
		for _, c := range cases {
			if c.only >= 0 && c.only != ui {
				continue
			}
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				dir := hostRepo(t, u)
				if c.setup != nil {
					c.setup(t, u, dir)
				}
				// A home elsewhere: a home in the start directory would
				// have wsh's own state directory (hidden, its directories
				// pinned) there, which pins more than the protection does.
				r := runWsh(t, u, dir+c.in, append([]string{"HOME=/nonexistent"}, jailEnv...), c.script)
				c.check(t, dir, r)
			})
		}
	}
}

// notPlanted fails the test when the file at path holds PLANTED.
func notPlanted(t *testing.T, path string, r result) {
	t.Helper()
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "PLANTED") {
		t.Errorf("%s planted:\n%s\n%s", path, b, r.stderr)
	}
}

// TestProtectedReview5: what the fifth review broke, read back on the
// host: the config it tried to plant is not there, or wsh said what the
// command changed.
func TestProtectedReview5(t *testing.T) {
	plant := `printf "[core]\n\tfsmonitor = touch PLANTED\n" >> `
	runProtectCases(t, []protectCase{
		{"a submodule's HEAD moved away, then back", -1,
			func(t *testing.T, u user, dir string) {
				sub := mkdirAllOwned(t, u, dir, ".git/modules/libs/sub")
				writeOwned(t, u, filepath.Join(sub, "HEAD"), "ref: refs/heads/master\n")
				writeOwned(t, u, filepath.Join(sub, "config"), "[core]\n\tbare = false\n")
			},
			`mv .git/modules/libs/sub/HEAD .git/modules/libs/sub/HEAD.bak; sh -c '` + plant + `.git/modules/libs/sub/config' 2>/dev/null; mv .git/modules/libs/sub/HEAD.bak .git/modules/libs/sub/HEAD`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, ".git", "modules", "libs", "sub", "config"), r)
			}, ""},
		{"a worktree's gitdir file rewritten", -1,
			func(t *testing.T, u user, dir string) {
				mkdirAllOwned(t, u, dir, ".worktrees")
				gitAs(t, u, dir, "worktree", "add", "-q", ".worktrees/feat")
			},
			`sh -c 'echo /nonexistent/.git > .git/worktrees/feat/gitdir' 2>/dev/null; sh -c 'echo "gitdir: /tmp/PLANTED" > .worktrees/feat/.git' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, ".worktrees", "feat", ".git"), r)
				if b, _ := os.ReadFile(filepath.Join(dir, ".git", "worktrees", "feat", "gitdir")); strings.Contains(string(b), "nonexistent") {
					t.Errorf("the worktree's gitdir file was rewritten: %s", b)
				}
			}, ""},
		{"a submodule whose .git is a directory, two levels down", -1,
			func(t *testing.T, u user, dir string) {
				sub := mkdirAllOwned(t, u, dir, "libs/sub")
				gitAs(t, u, sub, "init", "-q")
				writeOwned(t, u, filepath.Join(dir, ".gitmodules"), "[submodule \"libs/sub\"]\n\tpath = libs/sub\n\turl = ../x\n")
			},
			`sh -c '` + plant + `libs/sub/.git/config' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, "libs", "sub", ".git", "config"), r)
			}, ""},
		{"a hook's symlink through a symlink of the working tree, re-pointed", -1,
			func(t *testing.T, u user, dir string) {
				mkdirAllOwned(t, u, dir, "tools/hooks")
				writeOwned(t, u, filepath.Join(dir, "tools", "hooks", "pre-commit"), "#!/bin/sh\n")
				os.Symlink("tools/hooks", filepath.Join(dir, "scripts"))
				os.Symlink("../../scripts/pre-commit", filepath.Join(dir, ".git", "hooks", "pre-commit"))
			},
			`mkdir evil; rm scripts; ln -s evil scripts`,
			func(t *testing.T, dir string, r result) {
				if !strings.Contains(r.stderr, "wsh: a command changed the symlink "+filepath.Join(dir, "scripts")) {
					t.Errorf("the symlink on the way to a hook, re-pointed, is not said:\n%s", r.stderr)
				}
			}, ""},
		{"a .git symlink's target made unsearchable", 1,
			// The gitdir's directory lies beside the start directory, not
			// in it (in it, the listing of the start directory fails).
			func(t *testing.T, u user, dir string) {
				mkdirOwned(t, u, dir+"-store")
				if err := os.Rename(filepath.Join(dir, ".git"), filepath.Join(dir+"-store", "x.git")); err != nil {
					t.Fatal(err)
				}
				os.Symlink(filepath.Join(dir+"-store", "x.git"), filepath.Join(dir, ".git"))
			},
			`chmod 000 $PWD-store; sh -c "chmod 755 $PWD-store && ` + strings.ReplaceAll(plant, `"`, `\"`) + `$PWD-store/x.git/config"`,
			func(t *testing.T, dir string, r result) {
				os.Chmod(dir+"-store", 0o755)
				notPlanted(t, filepath.Join(dir+"-store", "x.git", "config"), r)
				if !strings.Contains(r.stderr, "cannot check the protected paths") {
					t.Errorf("no command refused:\n%s", r.stderr)
				}
			}, ""},
		{"a repository below reached through a symlink, re-pointed", -1,
			func(t *testing.T, u user, dir string) {
				other := dir + "-other"
				mkdirOwned(t, u, other)
				gitAs(t, u, other, "init", "-q")
				os.Symlink(other, filepath.Join(dir, "p1"))
			},
			`rm p1; ln -s /nonexistent p1; sh -c "` + strings.ReplaceAll(plant, `"`, `\"`) + `$PWD-other/.git/config" 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir+"-other", ".git", "config"), r)
			}, ""},
	})
}

// TestProtectedRepositoryMadeInAChild: a repository made (git init) in a
// child of the start directory that existed before is protected from the
// next command on, though the start directory itself did not change.
func TestProtectedRepositoryMadeInAChild(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			parent := workDir(t, u)
			sub := filepath.Join(parent, "sub")
			mkdirOwned(t, u, sub)
			// Old enough that a listing of parent is kept.
			old := time.Now().Add(-time.Hour)
			os.Chtimes(parent, old, old)
			out := mustJail(t, u, parent, nil, `/bin/true; git init -q sub; /bin/true; sh -c 'printf "#!/bin/sh\n" > sub/.git/hooks/pre-commit' 2>&1; true`)
			if _, err := os.Lstat(filepath.Join(sub, ".git", "hooks", "pre-commit")); err == nil {
				t.Errorf("a hook was planted in a repository made in an existing child:\n%s", out)
			}
		})
	}
}

// TestPlaceholderNotThroughASymlink: wsh makes its placeholders in a
// directory opened without symlinks: a jailed job that swaps a fake
// submodule gitdir for a symlink elsewhere while later commands start
// does not have wsh make them there.
func TestPlaceholderNotThroughASymlink(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("this test needs python3: %v", err)
	}
	u := users[0]
	dir := hostRepo(t, u)
	target := t.TempDir() // a directory wsh has no reason to write to
	// The job makes the fake gitdir after its own jail started (so that
	// its jail did not pin it), and a symlink to target, and swaps them.
	// (The symlink is beside the gitdir: a rename cannot cross the
	// jail's mount of .git.)
	swap := strings.ReplaceAll(strings.ReplaceAll(swapScript, `b"x"`, `b".git/modules/y"`), `b"xl"`, `b".git/modules/ylink"`)
	swap = strings.Replace(swap, "end = ", "os.makedirs('.git/modules/y', exist_ok=True)\nopen('.git/modules/y/HEAD', 'w').write('ref: refs/heads/master\\n')\nos.symlink(sys.argv[2], '.git/modules/ylink')\nend = ", 1)
	writeOwned(t, u, filepath.Join(dir, "swap.py"), swap)
	// Listed at the end of the run too: what wsh made there it would
	// remove when the run ends.
	r := runWsh(t, u, dir, jailEnv, `python3 swap.py 4 `+target+` & sleep 0.3; i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; wait; ls -A `+target)
	if r.stdout != "" {
		t.Errorf("wsh made placeholders through the swapped symlink, in %s: %s", target, r.stdout)
	}
	if ents, _ := os.ReadDir(target); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("wsh made placeholders through the swapped symlink, in %s: %v", target, names)
	}
}

// TestProtectedReview6: what the sixth review broke, read back on the
// host.
func TestProtectedReview6(t *testing.T) {
	plant := `printf "[core]\n\tfsmonitor = touch PLANTED\n" >> `
	subRepo := func(t *testing.T, u user, dir, rel string) {
		gitAs(t, u, mkdirAllOwned(t, u, dir, rel), "init", "-q")
	}
	runProtectCases(t, []protectCase{
		{"the start directory's parent moved away, a copy in its place", -1, nil,
			`sh -c 'd=$(dirname "$PWD"); mv "$d" "$d.moved" && cp -a "$d.moved" "$d" && printf "[core]\n\tfsmonitor = touch PLANTED\n" >> "$PWD/.git/config"' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				moved := filepath.Dir(dir) + ".moved"
				if _, err := os.Lstat(moved); err == nil {
					// Put the tree back as it was, for the cleanup.
					os.RemoveAll(filepath.Dir(dir))
					os.Rename(moved, filepath.Dir(dir))
					t.Errorf("a command moved the directory above the start directory")
				}
				notPlanted(t, filepath.Join(dir, ".git", "config"), r)
			}, ""},
		{"the main repository's commondir, from a worktree beside it", -1,
			func(t *testing.T, u user, dir string) {
				mkdirOwned(t, u, dir+"-wt")
				gitAs(t, u, dir, "worktree", "add", "-q", dir+"-wt", "-b", "feat")
			},
			`sh -c 'echo /tmp/PLANTED > "${PWD%-wt}/.git/commondir"' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, ".git", "commondir"), r)
			}, "-wt"},
		{"the gitdir of a submodule not cloned yet", -1,
			func(t *testing.T, u user, dir string) {
				src := dir + "-src"
				mkdirOwned(t, u, src)
				gitAs(t, u, src, "init", "-q")
				gitAs(t, u, src, "commit", "-q", "--allow-empty", "-m", "s")
				gitAs(t, u, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "lib")
				gitAs(t, u, dir, "commit", "-q", "-m", "lib")
				mkdirOwned(t, u, dir+"-clone")
				gitAs(t, u, dir+"-clone", "clone", "-q", dir, ".")
			},
			`sh -c 'mkdir -p .git/modules/lib/hooks && echo "touch PLANTED" > .git/modules/lib/hooks/post-checkout' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				if _, err := os.Lstat(filepath.Join(dir+"-clone", ".git", "modules", "lib", "hooks", "post-checkout")); err == nil {
					t.Errorf("a command planted the gitdir of a submodule not cloned yet")
				}
			}, "-clone"},
		{"a worktree whose gitdir file is relative", -1,
			func(t *testing.T, u user, dir string) {
				mkdirAllOwned(t, u, dir, "trees/a")
				gitAs(t, u, dir, "worktree", "add", "-q", "trees/a/wt", "-b", "feat")
				writeOwned(t, u, filepath.Join(dir, ".git", "worktrees", "wt", "gitdir"), "../../../trees/a/wt/.git\n")
				writeOwned(t, u, filepath.Join(dir, "trees", "a", "wt", ".git"), "gitdir: ../../../.git/worktrees/wt\n")
			},
			`sh -c 'echo "gitdir: /tmp/PLANTED" > trees/a/wt/.git' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, "trees", "a", "wt", ".git"), r)
			}, ""},
		{".gitmodules in the forms git also reads", -1,
			func(t *testing.T, u user, dir string) {
				subRepo(t, u, dir, "deep/one")
				subRepo(t, u, dir, "deep/two")
				writeOwned(t, u, filepath.Join(dir, ".gitmodules"), "[submodule \"one\"] path = deep/one\n[submodule.two]\n\tpath = deep/two\n")
			},
			`sh -c '` + plant + `deep/one/.git/config' 2>/dev/null; sh -c '` + plant + `deep/two/.git/config' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, filepath.Join(dir, "deep", "one", ".git", "config"), r)
				notPlanted(t, filepath.Join(dir, "deep", "two", ".git", "config"), r)
			}, ""},
		{"the commondir of a gitdir elsewhere", -1,
			func(t *testing.T, u user, dir string) {
				if err := os.Rename(filepath.Join(dir, ".git"), dir+"-store.git"); err != nil {
					t.Fatal(err)
				}
				writeOwned(t, u, filepath.Join(dir, ".git"), "gitdir: "+dir+"-store.git\n")
			},
			`sh -c 'echo /tmp/PLANTED > "$PWD-store.git/commondir"' 2>/dev/null; true`,
			func(t *testing.T, dir string, r result) {
				notPlanted(t, dir+"-store.git/commondir", r)
			}, ""},
		{"a FIFO where a config is read does not block wsh", -1, nil,
			`mkfifo .gitmodules; /bin/echo next; rm .gitmodules`,
			func(t *testing.T, dir string, r result) {
				if r.stdout != "next\n" {
					t.Errorf("after a FIFO .gitmodules: status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
			}, ""},
		{"a symlink loop does not stop every command", -1, nil,
			`ln -s loop loop; /bin/true && rm loop && echo fine`,
			func(t *testing.T, dir string, r result) {
				if r.stdout != "fine\n" || strings.Contains(r.stderr, "cannot check") {
					t.Errorf("after a symlink loop: status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
			}, ""},
	})
}
