//go:build linux && cgo

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// gitHome runs the host's git as u in dir, unconfined, with u's home.
func gitHome(t *testing.T, u user, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// homeRepo makes a repository with one commit in a new project of u's
// home fixture, and a bare repository beside its work tree (remote.git,
// in the project, so writable in the jail).
func homeRepo(t *testing.T, u user) (*realHome, string) {
	t.Helper()
	h := userHome(t, u)
	dir := h.newProject(t, "gitcfg")
	gitHome(t, u, h.dir, dir, "init", "-q", "-b", "master")
	gitHome(t, u, h.dir, dir, "add", "README")
	gitHome(t, u, h.dir, dir, "commit", "-qm", "first")
	gitHome(t, u, h.dir, dir, "init", "-q", "--bare", "remote.git")
	return h, dir
}

// TestGitConfigRoutineWrites: in one run in a repository under a real
// home, git remote add, branch -M, config user.email, push to a local bare
// remote, branch --set-upstream-to and status all work (each exits 0, git
// says no error), and the host's git config --list --local, read after the
// run outside wsh, has each change: wsh wrote them into .git/config, which
// stays protected (the hook check of TestProtectedPathsInWritableRoots).
func TestGitConfigRoutineWrites(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			script := `set -e
git remote add origin "$PWD/remote.git"
git branch -M main
git config user.email x@y
git push -q origin main
git branch --set-upstream-to=origin/main
git status -sb | head -1
`
			r := runWsh(t, u, dir, h.env(jailEnv...), script)
			// The one thing wsh says: where the host's next fetch or
			// push goes now.
			said := "wsh: wrote remote.origin.url = " + filepath.Join(dir, "remote.git") + " to " + filepath.Join(dir, ".git", "config") + ": the host's next git fetch or push there goes to it\n"
			if r.status != 0 || strings.Contains(r.stderr, "could not") || strings.Replace(r.stderr, said, "", 1) != "" {
				t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if got := lines[len(lines)-1]; got != "## main...origin/main" {
				t.Errorf("git status -sb in the jail: %q, want main tracking origin/main, ahead 0", got)
			}
			list := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
			for _, want := range []string{"remote.origin.url=" + filepath.Join(dir, "remote.git"), "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
				"user.email=x@y", "branch.main.remote=origin", "branch.main.merge=refs/heads/main"} {
				if !strings.Contains(list, want+"\n") {
					t.Errorf("the host's config has no %s:\n%s", want, list)
				}
			}
			if b := gitHome(t, u, h.dir, dir, "branch", "--show-current"); strings.TrimSpace(b) != "main" {
				t.Errorf("the host's branch: %q, want main", b)
			}
		})
	}
}

// refusedGitKeys are keys that name a program, or load a config, with the
// value that would make the host's git run `touch MARK`.
var refusedGitKeys = [][2]string{
	{"core.fsmonitor", "touch $MARK"}, {"core.hooksPath", "$MARK.hooks"}, {"core.sshCommand", "touch $MARK"},
	{"core.editor", "touch $MARK"}, {"core.pager", "touch $MARK"}, {"filter.x.clean", "touch $MARK"},
	{"diff.x.textconv", "touch $MARK"}, {"alias.x", "!touch $MARK"}, {"include.path", "$MARK.cfg"},
	{"includeIf.gitdir:/.path", "$MARK.cfg"}, {"credential.helper", "!touch $MARK"},
	{"uploadpack.packObjectsHook", "touch $MARK"},
}

// refusedScript sets each key of refusedGitKeys in FILE four ways, each
// line "KEY WAY: ok" or "KEY WAY: refused": git config (--worktree for
// config.worktree), git config --file, a config.lock made by hand and
// moved over FILE, and a direct append.
func refusedScript(file, gitFlag string) string {
	var b strings.Builder
	b.WriteString(`try() { name=$1; shift; if "$@" 2>>err.log; then echo "$name: ok"; else echo "$name: refused"; fi; }
printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" > "$MARK.cfg"
mkdir -p "$MARK.hooks" && printf '#!/bin/sh\ntouch %s\n' "$MARK" > "$MARK.hooks/post-checkout" && chmod +x "$MARK.hooks/post-checkout"
`)
	for _, kv := range refusedGitKeys {
		k, v := kv[0], kv[1]
		sec, name := k[:strings.LastIndexByte(k, '.')], k[strings.LastIndexByte(k, '.')+1:]
		if i := strings.IndexByte(sec, '.'); i >= 0 {
			sec = sec[:i] + ` "` + sec[i+1:] + `"`
		}
		b.WriteString(`try "` + k + ` git-config" git config ` + gitFlag + ` "` + k + `" "` + v + `"` + "\n")
		b.WriteString(`try "` + k + ` git-config-file" git config --file ` + file + ` "` + k + `" "` + v + `"` + "\n")
		entry := `printf '[` + sec + `]\n\t` + name + ` = %s\n' "` + v + `"`
		b.WriteString(`try "` + k + ` mv" sh -c 'cp ` + file + ` ` + file + `.lock && ` + strings.ReplaceAll(entry, "'", `'"'"'`) + ` >> ` + file + `.lock && mv ` + file + `.lock ` + file + `'` + "\n")
		b.WriteString(`try "` + k + ` append" sh -c '` + strings.ReplaceAll(entry, "'", `'"'"'`) + ` >> ` + file + `'` + "\n")
	}
	b.WriteString("rm -f " + file + ".lock err.log\n")
	return b.String()
}

// TestGitConfigRefusedKeys: every key that names a program or loads a
// config, set in .git/config (and in config.worktree, with
// extensions.worktreeConfig) by git config, git config --file, a
// config.lock moved over it and a direct write, is refused: the host's
// file is byte for byte as it was, the host's next git status and
// checkout run nothing (the marker stays absent), and wsh says each key
// it refused. An allowed key in config.worktree is written.
func TestGitConfigRefusedKeys(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			gitHome(t, u, h.dir, dir, "config", "extensions.worktreeConfig", "true")
			md := workDir(t, u)
			mark := filepath.Join(md, "planted")
			for _, c := range []struct{ file, flag string }{{".git/config", ""}, {".git/config.worktree", "--worktree"}} {
				before, _ := os.ReadFile(filepath.Join(dir, c.file))
				r := runWsh(t, u, dir, h.env(append([]string{"MARK=" + mark}, jailEnv...)...), refusedScript(c.file, c.flag))
				if r.status != 0 {
					t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
				}
				for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					if !strings.HasSuffix(l, ": refused") {
						t.Errorf("%s: %s", c.file, l)
					}
				}
				if after, _ := os.ReadFile(filepath.Join(dir, c.file)); !bytes.Equal(before, after) {
					t.Errorf("the host's %s changed:\n%s", c.file, after)
				}
				for _, kv := range refusedGitKeys {
					if !strings.Contains(strings.ToLower(r.stderr), ": "+strings.ToLower(kv[0])+" ") {
						t.Errorf("%s: no refusal of %s said:\n%s", c.file, kv[0], r.stderr)
					}
				}
			}
			hostGit(t, u, dir)
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("the host's git ran what a command set in the jail")
			}
			mustRun(t, u, dir, h.env(jailEnv...), "git config --worktree user.name 'In Jail'")
			if got := gitHome(t, u, h.dir, dir, "config", "--worktree", "user.name"); strings.TrimSpace(got) != "In Jail" {
				t.Errorf("config.worktree's user.name on the host: %q", got)
			}
		})
	}
}

// renameCases is a python3 script that renames onto .git/config every way
// the mediation must judge, each line "CASE: ERRNO-NAME" (or "0"). ok.lock
// holds the host's config and one allowed key more.
const renameCases = `import ctypes, errno, os, shutil
libc = ctypes.CDLL(None, use_errno=True)
def r2(old, new, flags=0, od=-100, nd=-100):
    if libc.renameat2(od, old.encode(), nd, new.encode(), flags) == 0:
        return "0"
    return errno.errorcode[ctypes.get_errno()]
def lock(name, extra="[user]\n\tname = Jail\n"):
    shutil.copyfile(".git/config", name)
    with open(name, "a") as f:
        f.write(extra)
os.symlink("config", ".git/sym.lock")
print("symlink source:", r2(".git/sym.lock", ".git/config"))
os.mkfifo(".git/fifo.lock")
print("fifo source:", r2(".git/fifo.lock", ".git/config"))
lock(".git/hard.lock"); os.link(".git/hard.lock", ".git/hard-other")
print("hard-linked source:", r2(".git/hard.lock", ".git/config"))
os.mkdir("sub"); lock("sub/config.lock")
print("source in another directory:", r2("sub/config.lock", ".git/config"))
lock(".git/x.lock")
print("exchange:", r2(".git/x.lock", ".git/config", 2))
print("noreplace:", r2(".git/x.lock", ".git/config", 1))
fd = os.open("README", os.O_RDONLY)
print("dirfd not a directory:", r2(".git/x.lock", "config", 0, -100, fd))
print("longer than PATH_MAX:", r2(".git/x.lock", "./" * 3000 + ".git/config"))
lock(".git/x.lock", "[core]\n\tfsmonitor = touch /x\n")
print("code-running key:", r2(".git/x.lock", ".git/config"))
g = os.open(".git", os.O_RDONLY | os.O_DIRECTORY)
lock(".git/ok.lock")
print("allowed, by directory descriptors:", r2("ok.lock", "config", 0, g, g))
print("lock left:", os.path.exists(".git/ok.lock"))
for n in ("sym.lock", "fifo.lock", "hard.lock", "hard-other", "x.lock"):
    os.unlink(".git/" + n)
shutil.rmtree("sub")
`

// TestGitConfigRenameCases: a rename onto .git/config whose source is a
// symlink, a FIFO, a file with another link, or a file of another
// directory is refused (EPERM) and said; RENAME_EXCHANGE is EBUSY (the
// config is a mount point), RENAME_NOREPLACE EEXIST, a dirfd that is not
// a directory ENOTDIR, a path longer than PATH_MAX ENAMETOOLONG, and a
// lock file with a code-running key EPERM, each leaving the host's config
// as it was; an allowed one named through directory descriptors is
// written, and its source removed.
func TestGitConfigRenameCases(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			before, _ := os.ReadFile(filepath.Join(dir, ".git/config"))
			r := runWsh(t, u, dir, h.env(append([]string{"PY=" + renameCases}, jailEnv...)...), `python3 -c "$PY"`)
			if r.status != 0 {
				t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
			}
			want := "symlink source: EPERM\nfifo source: EPERM\nhard-linked source: EPERM\nsource in another directory: EPERM\n" +
				"exchange: EBUSY\nnoreplace: EEXIST\ndirfd not a directory: ENOTDIR\nlonger than PATH_MAX: ENAMETOOLONG\n" +
				"code-running key: EPERM\nallowed, by directory descriptors: 0\nlock left: False\n"
			if r.stdout != want {
				t.Errorf("in the jail:\n%s\nwant:\n%s\nstderr:\n%s", r.stdout, want, r.stderr)
			}
			for _, said := range []string{"is not a regular file", "has 2 links", "is not in the config's directory", "core.fsmonitor names a program"} {
				if !strings.Contains(r.stderr, said) {
					t.Errorf("no refusal that %q said:\n%s", said, r.stderr)
				}
			}
			after, _ := os.ReadFile(filepath.Join(dir, ".git/config"))
			if want := string(before) + "[user]\n\tname = Jail\n"; string(after) != want {
				t.Errorf("the host's config:\n%s\nwant:\n%s", after, want)
			}
		})
	}
}

// TestGitConfigLinkedWorktree: in a linked worktree of the project (the
// project, where the common directory is, is the start directory), git
// config writes the common directory's config (an allowed key is there
// after the run, on the host) and refuses a key that runs a program,
// which the host's config then does not have.
func TestGitConfigLinkedWorktree(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			gitHome(t, u, h.dir, dir, "worktree", "add", "-q", "wt")
			r := runWsh(t, u, dir, h.env(jailEnv...), "cd wt && git config user.email wt@y && ! git config core.fsmonitor 'touch /x'")
			if r.status != 0 || !strings.Contains(r.stderr, filepath.Join(dir, ".git", "config")+": core.fsmonitor names a program") {
				t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
			}
			list := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
			if !strings.Contains(list, "user.email=wt@y\n") || strings.Contains(list, "fsmonitor") {
				t.Errorf("the host's common config:\n%s", list)
			}
		})
	}
}

// TestGitConfigWshInWsh: a wsh run by a command of wsh's gets no session
// of its own (the outer filter's listener leaves no room for its zygote's,
// and it says so once), and its commands' writes of the outer jail's
// protected config go to the outer wsh, which writes an allowed key and
// refuses a code-running one: the host's config has the first only.
func TestGitConfigWshInWsh(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			inner := "env -u WSH_REQUIRE_SANDBOX WSH_JAIL=session " + wshBin + ` -c "git config user.email inner@y && ! git config core.fsmonitor 'touch /x'"`
			r := runWsh(t, u, dir, h.env(jailEnv...), inner)
			if r.status != 0 || !strings.Contains(r.stderr, ": core.fsmonitor names a program") {
				t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
			}
			if strings.Count(r.stderr, "no session on the landlock rung: the kernel refused its seccomp listener") != 1 {
				t.Errorf("the inner wsh does not say once that it has no session:\n%s", r.stderr)
			}
			list := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
			if !strings.Contains(list, "user.email=inner@y\n") || strings.Contains(list, "fsmonitor") {
				t.Errorf("the host's config:\n%s", list)
			}
		})
	}
}

// TestGitConfigOfRepositoryMadeMidRun: git init, then git remote add, in
// one session: the new repository's config, bound read-only in the live
// jail, is written through wsh as an older one is (an allowed key is on
// the host after the run, a code-running one is refused and said).
func TestGitConfigOfRepositoryMadeMidRun(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			dir := h.newProject(t, "gitcfg-new")
			r := runWsh(t, u, dir, h.env(jailEnv...), `true; git init -q && git remote add origin /tmp/none.git && echo added
git config core.fsmonitor 'touch /x' || echo refused`)
			if r.stdout != "added\nrefused\n" || !strings.Contains(r.stderr, filepath.Join(dir, ".git", "config")+": core.fsmonitor names a program") {
				t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
			}
			list := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
			if !strings.Contains(list, "remote.origin.url=/tmp/none.git\n") || strings.Contains(list, "fsmonitor") {
				t.Errorf("the host's config:\n%s", list)
			}
		})
	}
}

// TestGitConfigWrittenBeforeProtectedIsSaid: a command that makes a
// repository and, before wsh can make its config read-only (the same
// command), sets a key the host's git would run: wsh says so with the
// next command, naming the file and the key. Root and 65534, the
// session's jail and (under E2E_WSH_JAIL=command) one per command.
func TestGitConfigWrittenBeforeProtectedIsSaid(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			dir := h.newProject(t, "gitcfg-early")
			r := runWsh(t, u, dir, h.env(jailEnv...), `sh -c 'git init -q && git config core.fsmonitor "touch /x" && git config user.email a@b'; ls >/dev/null; ls >/dev/null`)
			want := filepath.Join(dir, ".git", "config") + ", made during the run before wsh could make it read-only, sets core.fsmonitor"
			if r.status != 0 || strings.Count(r.stderr, want) != 1 {
				t.Errorf("status %d, not said once that the config sets core.fsmonitor:\n%s", r.status, r.stderr)
			}
			if strings.Contains(r.stderr, "sets user.email") {
				t.Errorf("an allowed key was said:\n%s", r.stderr)
			}
			// The same as the run's last command: said at its end.
			dir2 := h.newProject(t, "gitcfg-early-last")
			r = runWsh(t, u, dir2, h.env(jailEnv...), `sh -c 'git init -q && git config core.fsmonitor "touch /x"'`)
			if want := filepath.Join(dir2, ".git", "config") + ", made during the run before wsh could make it read-only, sets core.fsmonitor"; strings.Count(r.stderr, want) != 1 {
				t.Errorf("as the last command: not said once:\n%s", r.stderr)
			}
		})
	}
}

// TestGitConfigHostSupervisor: on a host whose own seccomp supervisor
// holds the listener (hostile mode 9: sysbox, LXD's interception), the
// full jail is made all the same, without wsh's git config group: a
// rename is as without wsh, a write of the protected config is refused
// (EBUSY) as before wsh made them, and wsh says why, once. It used to
// fail every command (126: the seccomp step's EBUSY). Root and 65534,
// the session and a jail per command.
func TestGitConfigHostSupervisor(t *testing.T) {
	for _, u := range users {
		for _, mode := range []string{"session", "command"} {
			t.Run(u.name+"/"+mode, func(t *testing.T) {
				h, dir := homeRepo(t, u)
				before := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
				script := `touch a && mv a b && echo renamed
git remote add origin /tmp/x 2>/dev/null; echo "remote $?"
git config user.name q 2>/dev/null; echo "name $?"
grep -q '^Seccomp:.2' /proc/self/status && echo filtered`
				r := runHostile(t, u, dir, append(h.env(jailEnv...), "WSH_JAIL="+mode), "9", script)
				if r.status != 0 || r.stdout != "renamed\nremote 128\nname 4\nfiltered\n" {
					t.Fatalf("status %d\n%s\n%s", r.status, r.stdout, r.stderr)
				}
				if n := strings.Count(r.stderr, "wsh: the jail has no seccomp listener for wsh (EBUSY"); n != 1 {
					t.Errorf("said %d times, want once:\n%s", n, r.stderr)
				}
				if after := gitHome(t, u, h.dir, dir, "config", "--list", "--local"); after != before {
					t.Errorf("the host's config changed:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
}

// TestGitConfigRenameOfProtected: a rename whose source is a protected
// file itself, a mount point of the jail's (the config onto itself, the
// config.worktree placeholder onto the config), is refused: wsh, which
// removes the source of a rename it makes, would have removed the host's
// file under the jail's bind (in wsh's mount namespace the bind is none),
// the protection with it, and a command could then write any config.
// Root and 65534.
func TestGitConfigRenameOfProtected(t *testing.T) {
	script := `python3 -c 'import os
for src in (".git/config", ".git/config.worktree"):
    try:
        os.rename(src, ".git/config"); print(src, "renamed")
    except OSError as e:
        print(src, os.strerror(e.errno))
    print(src, "there:", os.path.exists(src))'
echo '[core]' >> .git/config 2>/dev/null || echo append refused`
	want := ".git/config Operation not permitted\n.git/config there: True\n" +
		".git/config.worktree Operation not permitted\n.git/config.worktree there: True\nappend refused\n"
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			before, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
			if err != nil {
				t.Fatal(err)
			}
			r := runWsh(t, u, dir, h.env(jailEnv...), script)
			if r.stdout != want {
				t.Errorf("stdout %q, want %q\n%s", r.stdout, want, r.stderr)
			}
			if !strings.Contains(r.stderr, "is a mount point of the jail's") {
				t.Errorf("the refusal is not said:\n%s", r.stderr)
			}
			if after, err := os.ReadFile(filepath.Join(dir, ".git", "config")); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the host's config: %q, %v; was %q", after, err, before)
			}
		})
	}
}

// TestGitConfigFixedKeysStay: what git init found of the repository
// (core.filemode, ...) is neither changed nor removed through wsh, so not
// in two writes either (a removal, then an addition), and no extension
// that changes how the repository is read is added: the host's git reads
// it as before. Root and 65534.
func TestGitConfigFixedKeysStay(t *testing.T) {
	script := `git config --unset core.filemode 2>/dev/null; echo "unset $?"
git config core.filemode false 2>/dev/null; echo "set $?"
git config extensions.refstorage reftable 2>/dev/null; echo "refstorage $?"
git config core.repositoryformatversion 1 && git config extensions.worktreeConfig true; echo "worktreeConfig $?"`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			r := runWsh(t, u, dir, h.env(jailEnv...), script)
			if r.stdout != "unset 4\nset 4\nrefstorage 4\nworktreeConfig 0\n" {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			list := gitHome(t, u, h.dir, dir, "config", "--list", "--local")
			if !strings.Contains(list, "core.filemode=true\n") || strings.Contains(list, "refstorage") {
				t.Errorf("the host's config:\n%s", list)
			}
			gitHome(t, u, h.dir, dir, "status", "--short")
		})
	}
}

// TestGitHardLinkRefused: a command that makes a repository and a
// hard link to its config in one go (before wsh can bind the config
// read-only) cannot write the host's config through the link later: a
// protected file with another link fails the protection, and every
// command after it is refused (126), said with the way out. Root and
// 65534, session and (E2E_WSH_JAIL=command) a jail per command.
func TestGitHardLinkRefused(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			dir := h.newProject(t, "hardlink")
			// The link would fail every later run in the home fixture
			// that reaches this project (one started in the home).
			t.Cleanup(func() { os.RemoveAll(dir) })
			r := runWsh(t, u, dir, h.env(jailEnv...), `sh -c 'git init -q && ln .git/config cfg2'; sh -c 'printf "[core]\n\tfsmonitor = touch /x\n" >> cfg2'; echo "write $?"`)
			if r.stdout != "write 126\n" || !strings.Contains(r.stderr, "cannot protect "+filepath.Join(dir, ".git", "config")+": it has 2 hard links") {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(dir, ".git", "config")); err != nil || strings.Contains(string(b), "fsmonitor") {
				t.Errorf("the host's config: %q, %v", b, err)
			}
		})
	}
}

// TestGitBareRemoteProtected: a bare repository in the project (a local
// remote, remote.git: it has no .git) is protected as a repository's
// gitdir: its hooks, which the host's next push runs, are read-only, and
// its config is written through wsh (a key that runs code refused). It
// was not protected at all. Root and 65534.
func TestGitBareRemoteProtected(t *testing.T) {
	script := `echo 'touch /tmp/x' > remote.git/hooks/pre-receive 2>/dev/null; echo "hook $?"
git config -f remote.git/config core.hooksPath /tmp 2>/dev/null; echo "config $?"
git config -f remote.git/config receive.denyCurrentBranch ignore 2>/dev/null; echo "receive $?"`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			cfg := filepath.Join(dir, "remote.git", "config")
			before, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := runWsh(t, u, dir, h.env(jailEnv...), script)
			if r.stdout != "hook 1\nconfig 4\nreceive 4\n" {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(dir, "remote.git", "hooks", "pre-receive")); err == nil {
				t.Errorf("a hook was planted in the bare remote")
			}
			if after, err := os.ReadFile(cfg); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the bare remote's config: %q, %v", after, err)
			}
			// A run that makes it look other than bare to wsh, as git
			// still takes it: an empty .git in it, objects a symlink.
			for _, defeat := range []string{"mkdir remote.git/.git", "mv remote.git/objects remote.git/objects.d && ln -s objects.d remote.git/objects"} {
				runWsh(t, u, dir, h.env(jailEnv...), defeat)
				r := runWsh(t, u, dir, h.env(jailEnv...), script)
				if r.stdout != "hook 1\nconfig 4\nreceive 4\n" {
					t.Errorf("after %q: stdout %q\n%s", defeat, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestGitHookLinkedElsewhere: a hook of a core.hooksPath directory
// (of any name) with another hard link, made by an earlier run before
// the directory was protected, fails the protection: the bind keeps the
// name, the other link would write the hook. Root and 65534.
func TestGitHookLinkedElsewhere(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			t.Cleanup(func() { os.RemoveAll(dir) })
			mustRun(t, u, dir, h.env(jailEnv...), `mkdir .githooks && echo 'echo benign' > .githooks/pre-commit && ln .githooks/pre-commit notes.txt`)
			gitHome(t, u, h.dir, dir, "config", "core.hooksPath", ".githooks")
			r := runWsh(t, u, dir, h.env(jailEnv...), `echo 'echo evil' >> notes.txt; echo "via link $?"`)
			if !strings.Contains(r.stderr, "cannot protect "+filepath.Join(dir, ".githooks", "pre-commit")+": it has 2 hard links") {
				t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".githooks", "pre-commit")); strings.Contains(string(b), "evil") {
				t.Errorf("the hook was written through its other link: %q", b)
			}
		})
	}
}

// TestGitConfigBranchRemoteNamesARemote: a branch's remote or pushremote
// must name a remote of the config (or "."): git takes any other name as
// a URL, so a command could send the host's next plain git push to a
// repository of its own. And what wsh says of a URL written shows it
// quoted where it holds what a terminal would not print (an escape that
// would hide the rest of the line). Root and 65534.
func TestGitConfigBranchRemoteNamesARemote(t *testing.T) {
	script := `git config branch.master.pushremote /tmp/elsewhere.git 2>/dev/null; echo "pushremote $?"
git remote add up "$(printf '/tmp/a\033[8mb')" && git config branch.master.remote up && echo "remote up"`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h, dir := homeRepo(t, u)
			r := runWsh(t, u, dir, h.env(jailEnv...), script)
			if r.stdout != "pushremote 4\nremote up\n" || !strings.Contains(r.stderr, "branch.master.pushremote names no remote") {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, `wsh: wrote remote.up.url = "/tmp/a\x1b[8mb"`) || strings.Contains(r.stderr, "\x1b") {
				t.Errorf("the URL is not shown quoted:\n%q", r.stderr)
			}
			if list := gitHome(t, u, h.dir, dir, "config", "--list", "--local"); strings.Contains(list, "pushremote") {
				t.Errorf("the host's config:\n%s", list)
			}
		})
	}
}
