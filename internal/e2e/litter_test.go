//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// listing is dir's tree as find prints it, hidden entries included: each
// entry's type and path, sorted.
func listing(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("find", ".", "-printf", "%y %p\n")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("find in %s: %v", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// sameListing fails the test unless dir lists as before.
func sameListing(t *testing.T, dir, before, what string, r result) {
	t.Helper()
	if now := listing(t, dir); now != before {
		t.Errorf("%s: the project's listing changed\nbefore:\n%s\nafter:\n%s\nstderr:\n%s", what, before, now, r.stderr)
	}
}

// A bgWsh is a wsh run in the background.
type bgWsh struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan struct{}
	cancel    context.CancelFunc
}

// startBg starts `wsh -c script` as u in dir, with jailEnv and env.
func startBg(t *testing.T, u user, dir string, env []string, script string) *bgWsh {
	t.Helper()
	return startBgVia(t, u, dir, env, script)
}

// startBgVia is startBg, with wsh started through the program via and its
// arguments, if any, which exec wsh's own argv after them.
func startBgVia(t *testing.T, u user, dir string, env []string, script string, via ...string) *bgWsh {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	b := &bgWsh{done: make(chan struct{}), cancel: cancel}
	b.cmd = wshCmd(ctx, u, dir, append(append([]string(nil), jailEnv...), env...), "-c", script)
	if len(via) > 0 {
		b.cmd.Path, b.cmd.Args = via[0], append(append([]string(nil), via...), b.cmd.Args...)
		b.cmd.Args[len(via)] = wshBin
	}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errb
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { b.cmd.Wait(); close(b.done) }()
	t.Cleanup(func() { b.cmd.Process.Kill(); <-b.done; cancel() })
	return b
}

// wait waits for b's end and returns what it gave.
func (b *bgWsh) wait(t *testing.T) result {
	t.Helper()
	<-b.done
	return result{stdout: b.out.String(), stderr: b.errb.String(), status: b.cmd.ProcessState.ExitCode()}
}

// gate makes a FIFO outside any project that every uid can open: a
// command in the jail and the test wait on each other through it.
func gate(t *testing.T, name string) string {
	t.Helper()
	d := t.TempDir()
	os.Chmod(d, 0o777)
	p := filepath.Join(d, name)
	if err := syscall.Mkfifo(p, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o666)
	return p
}

// reached waits until a command of b has written a line to the gate p.
func reached(t *testing.T, b *bgWsh, p string) {
	t.Helper()
	got := make(chan struct{})
	go func() {
		if f, err := os.Open(p); err == nil {
			f.Read(make([]byte, 64))
			f.Close()
		}
		close(got)
	}()
	select {
	case <-got:
	case <-b.done:
		unblock(p, os.O_WRONLY)
		t.Fatalf("wsh ended before its command reached %s:\n%s%s", filepath.Base(p), b.out.String(), b.errb.String())
	}
}

// release lets a command of b that reads the gate p go on.
func release(t *testing.T, b *bgWsh, p string) {
	t.Helper()
	sent := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Write([]byte("go\n"))
			f.Close()
		}
		close(sent)
	}()
	select {
	case <-sent:
	case <-b.done:
		unblock(p, os.O_RDONLY)
		t.Fatalf("wsh ended before its command read %s:\n%s%s", filepath.Base(p), b.out.String(), b.errb.String())
	}
}

// unblock opens the FIFO p the other way, without waiting, so that the
// test's own blocked open returns.
func unblock(p string, flag int) {
	if f, err := os.OpenFile(p, flag|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// TestNothingLeftBehind: after wsh, the project lists as it did before:
// the placeholders wsh made where protected paths were missing (the
// agents' and editors' directories, the repository's empty
// config.worktree and its commondir) are gone, after a plain run, a run
// whose command was killed with SIGKILL, SIGTERM to wsh while a command
// runs, and on the landlock rung (where wsh makes none, and says nothing
// about what it made). Each run shows the placeholders were there in it.
func TestNothingLeftBehind(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			t.Run("plain", func(t *testing.T) {
				dir := hostRepo(t, u)
				before := listing(t, dir)
				out := mustJail(t, u, dir, nil, "ls -a; ls .git")
				if !strings.Contains(out, ".vscode\n") || !strings.Contains(out, "commondir\n") {
					t.Fatalf("no placeholders in the jail:\n%s", out)
				}
				sameListing(t, dir, before, "a plain run", result{})
			})
			t.Run("command killed", func(t *testing.T) {
				dir := hostRepo(t, u)
				before := listing(t, dir)
				r := runWsh(t, u, dir, jailEnv, `sleep 100 & kill -9 $!; wait $!; echo "sleep: $?"; sh -c 'ls -a; kill -9 $$'; echo "sh: $?"`)
				if !strings.Contains(r.stdout, "sleep: 137\n") || !strings.Contains(r.stdout, ".idea\n") || !strings.Contains(r.stdout, "sh: 137\n") {
					t.Fatalf("the commands were not killed in the jail: status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				sameListing(t, dir, before, "a command killed with SIGKILL", r)
			})
			t.Run("SIGTERM to wsh", func(t *testing.T) {
				dir := hostRepo(t, u)
				before := listing(t, dir)
				up := gate(t, "up")
				b := startBg(t, u, dir, []string{"UP=" + up}, `sh -c 'ls -a > "$UP"; exec sleep 100'`)
				reached(t, b, up)
				b.cmd.Process.Signal(syscall.SIGTERM)
				r := b.wait(t)
				ws := b.cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !(ws.Signaled() && ws.Signal() == syscall.SIGTERM) && r.status != 128+int(syscall.SIGTERM) {
					t.Errorf("wsh after SIGTERM: %v\n%s", b.cmd.ProcessState, r.stderr)
				}
				sameListing(t, dir, before, "SIGTERM to wsh", r)
			})
			t.Run("jail killed", func(t *testing.T) {
				// The session's jail crashes (its init, wsh's child, is
				// killed from outside) while a command runs in it; the
				// next command gets a jail of its own.
				dir := hostRepo(t, u)
				before := listing(t, dir)
				up := gate(t, "up")
				b := startBg(t, u, dir, []string{"UP=" + up}, `sh -c 'echo up > "$UP"; exec sleep 100'; sh -c 'ls -a'`)
				reached(t, b, up)
				// Each thread's children: the init is forked by the
				// thread its launch ran on, not always the main one.
				var kids []byte
				tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", b.cmd.Process.Pid))
				for _, f := range tasks {
					k, _ := os.ReadFile(f)
					kids = append(append(kids, k...), ' ')
				}
				if err != nil || len(strings.Fields(string(kids))) == 0 {
					t.Fatalf("wsh's children: %q %v", kids, err)
				}
				for _, k := range strings.Fields(string(kids)) {
					pid, _ := strconv.Atoi(k)
					syscall.Kill(pid, syscall.SIGKILL)
				}
				r := b.wait(t)
				if !strings.Contains(r.stdout, ".claude\n") {
					t.Fatalf("no command ran after the jail was killed: status %d\n%s%s", r.status, r.stdout, r.stderr)
				}
				sameListing(t, dir, before, "the session's jail killed", r)
			})
			t.Run("written on the host", func(t *testing.T) {
				// An editor on the host saves into a placeholder during
				// the run: it is the user's then, and stays.
				dir := hostRepo(t, u)
				before := listing(t, dir)
				up, goOn := gate(t, "up"), gate(t, "go")
				b := startBg(t, u, dir, []string{"UP=" + up, "GO=" + goOn}, `sh -c 'echo up > "$UP"; read x < "$GO"'`)
				reached(t, b, up)
				writeOwned(t, u, filepath.Join(dir, ".vscode", "settings.json"), "{}\n")
				release(t, b, goOn)
				r := b.wait(t)
				want := strings.Join(append(strings.Split(before, "\n"), "d ./.vscode", "f ./.vscode/settings.json"), "\n")
				sorted := strings.Split(want, "\n")
				sort.Strings(sorted)
				sameListing(t, dir, strings.Join(sorted, "\n"), "a placeholder written to on the host", r)
			})
			t.Run("chmod on the host", func(t *testing.T) {
				// chmod -R of the project on the host during the run
				// changes every placeholder's ctime, and nothing else
				// of them: they are still wsh's, and go.
				dir := hostRepo(t, u)
				before := listing(t, dir)
				up, goOn := gate(t, "up"), gate(t, "go")
				b := startBg(t, u, dir, []string{"UP=" + up, "GO=" + goOn}, `sh -c 'echo up > "$UP"; read x < "$GO"'`)
				reached(t, b, up)
				if out, err := exec.Command("chmod", "-R", "g+w", dir).CombinedOutput(); err != nil {
					t.Fatalf("chmod: %v\n%s", err, out)
				}
				release(t, b, goOn)
				sameListing(t, dir, before, "chmod -R on the host during the run", b.wait(t))
			})
			// The landlock rung, where the clone was refused, and where
			// the mount was (the full rung's init had started, and its
			// protection was being found).
			for _, m := range []hostileMode{cloneEPERM, mountEPERM} {
				t.Run("landlock rung/"+m.name(), func(t *testing.T) {
					dir := hostRepo(t, u)
					before := listing(t, dir)
					r := runHostile(t, u, dir, nil, m.arg, "sh -c true; sh -c true")
					if r.status != 0 || !strings.Contains(r.stderr, "landlock rung") {
						t.Fatalf("not on the landlock rung: status %d\n%s", r.status, r.stderr)
					}
					if strings.Contains(r.stderr, "a command made") {
						t.Errorf("wsh blames a command for what it made:\n%s", r.stderr)
					}
					sameListing(t, dir, before, "the landlock rung", r)
				})
			}
		})
	}
}

// TestNothingLeftAfterSIGKILLOfWsh: wsh killed with SIGKILL leaves its
// placeholders (docs/sandbox.md says so); the next run of the same user,
// in another directory, removes them, through the ledger in wsh's state
// directory, or, where there is none (the home lies in a writable path),
// in /dev/shm.
func TestNothingLeftAfterSIGKILLOfWsh(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			for _, where := range []string{"state directory", "no state directory"} {
				t.Run(where, func(t *testing.T) {
					dir := hostRepo(t, u)
					var env []string
					if where == "state directory" {
						home, err := os.MkdirTemp("/home", "wsh-e2e-litter-")
						if err != nil {
							t.Fatal(err)
						}
						t.Cleanup(func() { os.RemoveAll(home) })
						mustChown(t, home, u.uid)
						env = []string{"HOME=" + home}
					}
					before := listing(t, dir)
					up := gate(t, "up")
					b := startBg(t, u, dir, append([]string{"UP=" + up}, env...), `sh -c 'echo up > "$UP"; exec sleep 100'`)
					reached(t, b, up)
					b.cmd.Process.Kill()
					r := b.wait(t)
					if listing(t, dir) == before {
						t.Fatalf("wsh killed with SIGKILL left nothing: did it make its placeholders?\n%s", r.stderr)
					}
					other := workDir(t, u)
					mustJail(t, u, other, env, "true")
					sameListing(t, dir, before, "the run after wsh was killed", r)
				})
			}
		})
	}
}

// TestPlaceholderSharedByConcurrentRuns: two runs in one project; the
// first ends while a command of the second runs: that command still
// cannot make what the first run's placeholders stood for (the first run
// does not remove what the second's jail binds), and once both ended the
// project lists as before.
func TestPlaceholderSharedByConcurrentRuns(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := hostRepo(t, u)
			before := listing(t, dir)
			upA, goA, upB, goB := gate(t, "upA"), gate(t, "goA"), gate(t, "upB"), gate(t, "goB")
			a := startBg(t, u, dir, []string{"UP=" + upA, "GO=" + goA}, `sh -c 'echo up > "$UP"; read x < "$GO"'`)
			reached(t, a, upA)
			b := startBg(t, u, dir, []string{"UP=" + upB, "GO=" + goB, "PROBE=" + probe},
				`sh -c 'echo up > "$UP"; read x < "$GO"
for p in .vscode .vscode/tasks.json .claude/settings.json .git/commondir .git/config.worktree; do echo "$p: $("$PROBE" make $p)"; done'`)
			reached(t, b, upB)
			release(t, a, goA)
			if r := a.wait(t); r.status != 0 {
				t.Fatalf("the first run: status %d\n%s", r.status, r.stderr)
			}
			release(t, b, goB)
			r := b.wait(t)
			if r.status != 0 {
				t.Fatalf("the second run: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if len(lines) != 5 {
				t.Fatalf("the second run's attempts:\n%s%s", r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("after the first run ended, a command of the second made a protected path: %s", l)
				}
			}
			sameListing(t, dir, before, "two runs", r)
		})
	}
}

// missingNames are the protected names wsh makes where they are missing
// in a project: the agents' and editors' files and directories,
// .mcp.json, .gitmodules.
var missingNames = []string{
	".vscode", ".idea", ".claude", ".codex", ".agents", ".cursor", ".gemini", ".devcontainer",
	".gitmodules", ".mcp.json", ".devcontainer.json",
	".zed", ".kiro", ".amazonq", ".roo", ".continue", ".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
}

// TestMissingProtectedNamesCannotBeMade: no command can make a missing
// protected name, by any way (a write, mkdir, a symlink, a rename onto
// it: each errno read back), in the project, in a repository below it,
// beneath the missing directory core.hooksPath names (.husky), or a
// missing hook; the shell's own redirection is refused too (done in the
// jail: where a command may make a name, .bashrc in a project, so may the
// shell). Nothing is left on the host.
func TestMissingProtectedNamesCannotBeMade(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := hostRepo(t, u)
			sub := hostRepo(t, u)
			if err := os.Rename(sub, filepath.Join(dir, "sub")); err != nil {
				t.Fatal(err)
			}
			unshared(t, u, dir, "git config core.hooksPath .husky")
			before := listing(t, dir)
			var paths []string
			for _, n := range missingNames {
				paths = append(paths, n, "sub/"+n)
			}
			paths = append(paths, ".vscode/tasks.json", ".claude/settings.json", ".husky", ".husky/pre-commit",
				".git/hooks/post-checkout", "sub/.git/hooks/post-checkout")
			script := `for p in ` + strings.Join(paths, " ") + `; do echo "$p: $("$PROBE" make "$p")"; done
for p in .mcp.json .gitmodules; do if (echo x > "$p") 2>/dev/null; then echo "$p: redirection=ok"; else echo "$p: redirection=refused"; fi; done`
			r := runWsh(t, u, dir, append([]string{"PROBE=" + probe, "HOME=" + workDir(t, u)}, jailEnv...), script)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.status != 0 || len(lines) != len(paths)+2 {
				t.Fatalf("status %d, %d attempts:\n%s%s", r.status, len(lines), r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("a command made a missing protected path: %s", l)
				}
			}
			sameListing(t, dir, before, "the attempts", r)
		})
	}
}

// TestPlaceholderSharedAcrossUsers: a run of root with umask 077 makes the
// placeholders in a project another user works in too; that user's run,
// started meanwhile, can open and hold them (wsh gives them their mode
// whatever the umask), so the first run's end keeps them, and the second
// run's commands still cannot make the names. The first user's next run
// removes them.
func TestPlaceholderSharedAcrossUsers(t *testing.T) {
	probe := probeBin(t)
	dir := hostRepo(t, root)
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	before := listing(t, dir)
	upA, goA, upB, goB := gate(t, "upA"), gate(t, "goA"), gate(t, "upB"), gate(t, "goB")
	// As a shell with umask 077 starts it.
	homeA, homeB := "HOME="+workDir(t, root), "HOME="+workDir(t, unprivileged)
	a := startBgVia(t, root, dir, []string{"UP=" + upA, "GO=" + goA, homeA}, `sh -c 'echo up > "$UP"; read x < "$GO"'`,
		"/bin/sh", "-c", `umask 077; exec "$0" "$@"`)
	reached(t, a, upA)
	b := startBg(t, unprivileged, dir, []string{"UP=" + upB, "GO=" + goB, "PROBE=" + probe, homeB},
		`sh -c 'echo up > "$UP"; read x < "$GO"
for p in .vscode .vscode/tasks.json .mcp.json; do echo "$p: $("$PROBE" make $p)"; done'`)
	reached(t, b, upB)
	release(t, a, goA)
	if r := a.wait(t); r.status != 0 {
		t.Fatalf("root's run: status %d\n%s", r.status, r.stderr)
	}
	release(t, b, goB)
	r := b.wait(t)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.status != 0 || len(lines) != 3 {
		t.Fatalf("the second user's run: status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
	for _, l := range lines {
		if strings.Contains(l, "=ok") {
			t.Errorf("after root's run ended, a command of the second user made a protected path: %s", l)
		}
	}
	mustJail(t, root, t.TempDir(), []string{homeA}, "true") // root's next run
	sameListing(t, dir, before, "two users' runs, then root's next", r)
}

// TestMissingHomeNamesCannotBeMade: in a home that lies in a writable path
// (HOME in /tmp, the start directory), no command can make a missing
// startup file of the home's shells, git or ssh (each errno read back),
// and nothing is left after the run; .ssh is made 0700 for the run, as ssh
// makes it. wsh makes no .bash_profile or .bash_login (an empty one would
// keep bash from reading .profile), and says after the command that one
// was made.
func TestMissingHomeNamesCannotBeMade(t *testing.T) {
	probe := probeBin(t)
	names := []string{".bashrc", ".profile", ".zshrc", ".zshenv", ".gitconfig", ".ssh", ".ssh/authorized_keys", ".bashrc.d"}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home := workDir(t, u)
			before := listing(t, home)
			script := `for p in ` + strings.Join(names, " ") + `; do echo "$p: $("$PROBE" make "$p")"; done; stat -c '.ssh %a' .ssh`
			r := runWsh(t, u, home, append([]string{"PROBE=" + probe, "HOME=" + home}, jailEnv...), script)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.status != 0 || len(lines) != len(names)+1 || lines[len(names)] != ".ssh 700" {
				t.Fatalf("status %d, %d attempts:\n%s%s", r.status, len(lines), r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("a command made a missing startup file of the home: %s", l)
				}
			}
			sameListing(t, home, before, "the attempts in the home", r)

			r = runWsh(t, u, home, append([]string{"HOME=" + home}, jailEnv...), `sh -c 'echo x > .bash_profile'`)
			if r.status != 0 || !strings.Contains(r.stderr, "a command made "+filepath.Join(home, ".bash_profile")) {
				t.Errorf(".bash_profile made by a command: status %d, and wsh says:\n%s", r.status, r.stderr)
			}
		})
	}
}
