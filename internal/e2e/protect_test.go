//go:build linux && cgo

package e2e

import (
	"context"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// persistScript tries, from inside a repository, every way to leave
// something that the host's git, or an editor or agent opening the
// project, runs later: core.fsmonitor in .git/config, a hook, a .git of its
// own in place of the real one, .vscode/tasks.json, .mcp.json, a command
// of .claude. Each line prints the attempt and "ok" or what failed. MARK
// is the marker a planted command would make.
const persistScript = `try() { name=$1; shift; if "$@" 2>/dev/null; then echo "$name: ok"; else echo "$name: refused"; fi; }
try "git config core.fsmonitor" git config core.fsmonitor "touch $MARK"
try "sh: append to .git/config" sh -c 'printf "[core]\n\tfsmonitor = touch %s\n" "$MARK" >> .git/config'
try "sh: a hook" sh -c 'printf "#!/bin/sh\ntouch %s\n" "$MARK" > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout'
try "sh: core.hooksPath" git config core.hooksPath /tmp
try "sh: through a symlink" sh -c 'ln -sf .git/config lnk && printf "[core]\n\tfsmonitor = touch %s\n" "$MARK" >> lnk'
try "sh: a hard link" sh -c 'ln .git/config hard && printf "[core]\n\tfsmonitor = touch %s\n" "$MARK" >> hard'
try "sh: move .git away" sh -c 'mv .git .git-away && mkdir .git'
try "sh: move the hooks away" sh -c 'mv .git/hooks .git/hooks-away'
try "sh: .vscode/tasks.json" sh -c 'mkdir -p .vscode && echo "{}" > .vscode/tasks.json'
try "sh: .mcp.json" sh -c 'echo "{}" > .mcp.json'
try "sh: .claude/commands" sh -c 'mkdir -p .claude/commands && echo x > .claude/commands/x.md'
try "sh: .gitmodules" sh -c 'echo "[submodule]" > .gitmodules'
try "sh: .claude/settings.json" sh -c 'mkdir -p .claude && echo "{\"hooks\":{}}" > .claude/settings.json'
try "sh: .git/commondir" sh -c 'mkdir -p "$MARK.common" && echo "$MARK.common" > .git/commondir'
try "sh: .git/config.worktree" sh -c 'printf "[core]\n\tfsmonitor = touch %s\n" "$MARK" >> .git/config.worktree'
`

// inProcessPersist is the same through the shell's own redirections.
const inProcessPersist = `try() { name=$1; shift; if "$@" 2>/dev/null; then echo "$name: ok"; else echo "$name: refused"; fi; }
w() { printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >> .git/config; }
h() { printf '#!/bin/sh\ntouch %s\n' "$MARK" > .git/hooks/post-merge; }
v() { echo '{}' > .vscode/settings.json; }
c() { echo /tmp > .git/commondir; }
try "in process: append to .git/config" w
try "in process: a hook" h
try "in process: .vscode/settings.json" v
try "in process: .git/commondir" c
`

// hostRepo makes a git repository with one commit, owned by u.
func hostRepo(t *testing.T, u user) string {
	t.Helper()
	dir := workDir(t, u)
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if u.uid >= 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	os.WriteFile(filepath.Join(dir, "f"), []byte("x\n"), 0o644)
	if u.uid >= 0 {
		os.Chown(filepath.Join(dir, "f"), u.uid, u.uid)
	}
	run("add", "f")
	run("-c", "user.name=host", "-c", "user.email=host@example.invalid", "commit", "-qm", "first")
	return dir
}

// hostGit runs the host's git in dir, unconfined, as u would after the
// command: status, and a checkout, which runs hooks and fsmonitor.
func hostGit(t *testing.T, u user, dir string) {
	t.Helper()
	for _, args := range [][]string{{"status"}, {"checkout", "-q", "-b", "after-" + uniqueNumber(0)}} {
		cmd := exec.Command("git", append([]string{"-c", "safe.directory=*"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		if u.uid >= 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
		}
		cmd.CombinedOutput()
	}
}

// unshared runs script with sh in a throwaway namespace, as u, in dir.
func unshared(t *testing.T, u user, dir, script string, env ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), "unshare", "-Urmn", "sh", "-c", script)
	cmd.Dir, cmd.Env = dir, append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir}, env...)
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestProtectedPathsInWritableRoots: in the jail, and through the shell's
// own redirections, no command can leave in a writable repository what
// the host's git (or an editor, or an agent) runs later; git itself still
// works. The marker a planted command would make stays absent after the
// host's git status and checkout. The control, the same script in a
// throwaway namespace, plants it.
func TestProtectedPathsInWritableRoots(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := hostRepo(t, u)
			writeOwned(t, u, filepath.Join(dir, ".mcp.json"), "{}\n")
			writeOwned(t, u, filepath.Join(dir, ".gitmodules"), "")
			md := t.TempDir()
			os.Chmod(md, 0o777)
			mark := filepath.Join(md, "planted")
			env := []string{"MARK=" + mark}
			out := mustJail(t, u, dir, env, persistScript+inProcessPersist)
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !strings.HasSuffix(l, ": refused") {
					t.Errorf("in the jail: %s", l)
				}
			}
			hostGit(t, u, dir)
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("the host's git ran what a command planted in the jail")
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
				t.Errorf(".git/config on the host has what the jail wrote:\n%s", b)
			}
			got := mustJail(t, u, dir, nil, "echo y > g && git add g && git -c user.name=jail -c user.email=j@example.invalid commit -qm second && git checkout -q -b jailbranch && git log --format=%s")
			if got != "second\nfirst\n" {
				t.Errorf("git add, commit, checkout -b in the jail: %q", got)
			}
			// The control: in a throwaway namespace every attempt succeeds
			// (moving the hooks fails only because .git was moved before),
			// and the host's git runs what one of them planted.
			cdir := hostRepo(t, u)
			writeOwned(t, u, filepath.Join(cdir, ".mcp.json"), "{}\n")
			writeOwned(t, u, filepath.Join(cdir, ".gitmodules"), "")
			cout := unshared(t, u, cdir, persistScript, "MARK="+mark)
			for _, l := range strings.Split(strings.TrimSpace(cout), "\n") {
				if !strings.HasSuffix(l, ": ok") && l != "sh: move the hooks away: refused" {
					t.Errorf("control: %s", l)
				}
			}
			ctl := hostRepo(t, u)
			unshared(t, u, ctl, `git config core.fsmonitor "touch $MARK"`, "MARK="+mark)
			hostGit(t, u, ctl)
			if _, err := os.Stat(mark); err != nil {
				t.Errorf("control: the host's git did not run the fsmonitor planted in a namespace")
			}
		})
	}
}

// TestProtectedPathExtra: WSH_PROTECT adds a name, matched in every
// writable path, and an absolute path.
func TestProtectedPathExtra(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			writeOwned(t, u, filepath.Join(dir, ".env"), "KEY=1\n")
			abs := filepath.Join(dir, "deploy.sh")
			writeOwned(t, u, abs, "echo deploy\n")
			env := append([]string{"WSH_PROTECT=.env:" + abs}, jailEnv...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := wshCmd(ctx, u, dir, env, "-c", "echo x >> .env; sh -c 'echo x >> .env'; sh -c 'echo x >> deploy.sh'; cat .env")
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), "KEY=1\n") || strings.Count(string(out), "Read-only file system") != 3 {
				t.Errorf("WSH_PROTECT: %s", out)
			}
			for _, f := range []string{".env", "deploy.sh"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if strings.Contains(string(b), "x\n") {
					t.Errorf("%s changed on the host: %q", f, b)
				}
			}
		})
	}
}

// TestProtectedRepositoryBelow: a repository one level below the start
// directory (wsh started in a directory of projects) is protected too,
// whether the shell or the command goes into it.
func TestProtectedRepositoryBelow(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			parent := workDir(t, u)
			repo := hostRepo(t, u)
			sub := filepath.Join(parent, "proj")
			if err := os.Rename(repo, sub); err != nil {
				t.Fatal(err)
			}
			out := mustJail(t, u, parent, nil, `sh -c 'cd proj && git config core.fsmonitor "touch x"' 2>&1; cd proj; git config core.hooksPath /tmp 2>&1; true`)
			if b, _ := os.ReadFile(filepath.Join(sub, ".git", "config")); strings.Contains(string(b), "fsmonitor") || strings.Contains(string(b), "hooksPath") {
				t.Errorf("a repository below the start directory was changed:\n%s\n%s", b, out)
			}
		})
	}
}

// TestProtectedGlobalGitConfig: the user's git config where it lies in a
// writable path ($XDG_CONFIG_HOME/git/config, $GIT_CONFIG_GLOBAL in the
// project or /tmp) is read-only in the jail and to the shell: git on the
// host reads it for every repository (core.hooksPath, core.fsmonitor).
func TestProtectedGlobalGitConfig(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			xdg := filepath.Join(dir, "xdg")
			mkdirOwned(t, u, xdg)
			mkdirOwned(t, u, filepath.Join(xdg, "git"))
			writeOwned(t, u, filepath.Join(xdg, "git", "config"), "[user]\n\tname = a\n")
			global := filepath.Join(dir, "global.gitconfig")
			writeOwned(t, u, global, "[user]\n\tname = b\n")
			env := append([]string{"XDG_CONFIG_HOME=" + xdg, "GIT_CONFIG_GLOBAL=" + global}, jailEnv...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := wshCmd(ctx, u, dir, env, "-c", `echo x >> xdg/git/config; sh -c 'echo x >> xdg/git/config'; sh -c 'echo x >> global.gitconfig'; echo x >> global.gitconfig`)
			out, _ := cmd.CombinedOutput()
			if strings.Count(string(out), "Read-only file system") != 4 {
				t.Errorf("the global git configs in a writable path: %s", out)
			}
			for _, f := range []string{filepath.Join(xdg, "git", "config"), global} {
				b, _ := os.ReadFile(f)
				if strings.Contains(string(b), "x\n") {
					t.Errorf("%s changed on the host: %q", f, b)
				}
			}
		})
	}
}

// TestProtectedHomeFiles: the home's own files that run on the host (a
// user unit, ssh's authorized_keys, a shell's aliases, the session's
// environment) stay read-only where a writable path holds them: wsh
// started in ~/.config or ~/.ssh, and a home in a writable path.
func TestProtectedHomeFiles(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, err := os.MkdirTemp("/home", "wsh-e2e-homefiles-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			mustChown(t, home, u.uid)
			mkdirAllOwned(t, u, home, ".config/systemd/user")
			mkdirAllOwned(t, u, home, ".ssh")
			writeOwned(t, u, filepath.Join(home, ".ssh", "authorized_keys"), "")
			env := append([]string{"HOME=" + home}, jailEnv...)
			r := runWsh(t, u, filepath.Join(home, ".config"), env, `echo x > systemd/user/a.service; sh -c 'echo x > systemd/user/b.service'; true`)
			r2 := runWsh(t, u, filepath.Join(home, ".ssh"), env, `echo key >> authorized_keys; sh -c 'echo x > config'; true`)
			for _, f := range []string{".config/systemd/user/a.service", ".config/systemd/user/b.service", ".ssh/config"} {
				if _, err := os.Lstat(filepath.Join(home, f)); err == nil {
					t.Errorf("%s made on the host:\n%s%s", f, r.stderr, r2.stderr)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys")); len(b) != 0 {
				t.Errorf("authorized_keys changed on the host: %q", b)
			}
			// A home in a writable path (/tmp): its aliases and the
			// session's environment.
			wh := workDir(t, u)
			writeOwned(t, u, filepath.Join(wh, ".bash_aliases"), "")
			mkdirAllOwned(t, u, wh, ".config/environment.d")
			proj := mkdirAllOwned(t, u, wh, "proj")
			r3 := runWsh(t, u, proj, append([]string{"HOME=" + wh}, jailEnv...),
				`echo "touch PLANTED" >> ~/.bash_aliases; sh -c 'echo LD_PRELOAD=/x.so > ~/.config/environment.d/x.conf'; true`)
			notPlanted(t, filepath.Join(wh, ".bash_aliases"), r3)
			if _, err := os.Lstat(filepath.Join(wh, ".config", "environment.d", "x.conf")); err == nil {
				t.Errorf("environment.d/x.conf made on the host:\n%s", r3.stderr)
			}
		})
	}
}
