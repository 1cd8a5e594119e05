//go:build linux && cgo

package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A protected path that appears during a run (git init, git clone, git
// worktree add, a tool's directory) is bound read-only in the session's
// live jail: the session, and a server a previous command started in it,
// go on; no "the session's jail ends" (issue 30, second bullet).

// homeProject makes a home under /home owned by u and a project in it,
// both removed after the test (the home's keeper let go first, as
// removeHomes does).
func homeProject(t *testing.T, u user) (home, proj string) {
	t.Helper()
	home, err := os.MkdirTemp("/home", "wsh-e2e-inplace-")
	if err != nil {
		t.Fatal(err)
	}
	proj = filepath.Join(home, "proj")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		wshCmd(ctx, u, proj, []string{"HOME=" + home}, "home", "reset").Run()
		os.RemoveAll(home)
	})
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if u.uid >= 0 {
		if err := os.Chown(home, u.uid, u.uid); err != nil {
			t.Fatal(err)
		}
	}
	mkdirOwned(t, u, proj)
	return home, proj
}

// freePort is a TCP port of the loopback free on the host now (the jail
// has a network namespace of its own: any would do there).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// serverUp starts python3's http.server on port in the background, and
// waits until it answers.
func serverUp(port string) string {
	return `python3 -m http.server ` + port + ` --bind 127.0.0.1 >/dev/null 2>&1 &
i=0; until curl -s -o /dev/null 127.0.0.1:` + port + `; do i=$((i+1)); [ $i -lt 600 ] || break; sleep 0.05; done
`
}

// serverAnswers prints "server: " and the HTTP status the server gives
// (000 when nothing answers).
func serverAnswers(port string) string {
	return `echo "server: $(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:` + port + `)"
`
}

// inPlaceWriteProbe tries to open each path for writing (made if missing) and
// prints the path and "written" or the errno's name.
const inPlaceWriteProbe = `python3 -c 'import errno, os, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o755)); print(p, "written")
    except OSError as e:
        print(p, errno.errorcode[e.errno])' `

// roMounts prints, for each path, the options of the mount on it in the
// jail's mountinfo ("none" when it is no mount point).
const roMounts = `for p in "$@"; do o=$(awk -v p="$PWD/$p" '$5==p {o=$6} END {print o}' /proc/self/mountinfo); echo "mount $p: ${o:-none}"; done`

// checkInPlace checks a run's output: the server answered after the
// change, a write to each of probe was refused (EROFS or EACCES, and
// nothing is there on the host), each of mounts was a read-only mount in
// the jail, and no renewal of the session was said.
func checkInPlace(t *testing.T, r result, proj string, probe, mounts []string) {
	t.Helper()
	if r.status != 0 || !strings.Contains(r.stdout, "server: 200\n") {
		t.Errorf("the server started before the change did not answer after it: status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "the session's jail ends") || strings.Contains(r.stderr, "new session") {
		t.Errorf("the session was made anew:\n%s", r.stderr)
	}
	for _, p := range probe {
		if !strings.Contains(r.stdout, p+" EROFS\n") && !strings.Contains(r.stdout, p+" EACCES\n") {
			t.Errorf("a write to %s was not refused:\n%s", p, r.stdout)
		}
		if strings.Contains(p, "hooks/") {
			if _, err := os.Lstat(filepath.Join(proj, p)); err == nil {
				t.Errorf("%s was written on the host:\n%s", p, r.stderr)
			}
		}
	}
	for _, p := range mounts {
		if !strings.Contains(r.stdout, "mount "+p+": ro,") {
			t.Errorf("%s is no read-only mount in the jail:\n%s", p, r.stdout)
		}
	}
}

// inPlaceScript is the run: the server, then change, then the server
// asked again, the write probe of probe and the mounts on mounts read
// back.
func inPlaceScript(port, change string, probe, mounts []string) string {
	return serverUp(port) + change + "\n" + serverAnswers(port) +
		inPlaceWriteProbe + strings.Join(probe, " ") + "\n" +
		"set -- " + strings.Join(mounts, " ") + "\n" + roMounts + "\nkill %1\n"
}

// TestProtectInPlaceGitInit: python3 -m http.server in the background,
// then git init, then curl, in one run of a project under a home: the
// server answers after the git init, and the new repository's hooks and
// config are read-only to commands from then on (the errno of a write,
// the jail's mountinfo), and nothing was written on the host.
func TestProtectInPlaceGitInit(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			port := freePort(t)
			probe := []string{".git/hooks/pre-commit", ".git/config"}
			mounts := []string{".git/hooks", ".git/config"}
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), inPlaceScript(port, "git init -q", probe, mounts))
			checkInPlace(t, r, proj, probe, mounts)
		})
	}
}

// fixtureGit runs git on the host as the test (root), with no user
// config, to make a fixture.
func fixtureGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// chownTree gives every file beneath dir to u.
func chownTree(t *testing.T, u user, dir string) {
	t.Helper()
	if u.uid < 0 {
		return
	}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, u.uid, u.uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProtectInPlaceCloneAndWorktree: in a project that is a repository,
// git clone of a local repository into the project and git worktree add
// inside it, during a run with a server in the background: both work, the
// server answers after them, and the clone's hooks and config and the
// worktree's gitdir are read-only from then on.
func TestProtectInPlaceCloneAndWorktree(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			src := filepath.Join(home, "src")
			for _, d := range []string{src, proj} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, "README"), []byte("hi\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				fixtureGit(t, d, "init", "-q")
				fixtureGit(t, d, "add", "README")
				fixtureGit(t, d, "commit", "-q", "-m", "first")
			}
			chownTree(t, u, home)
			port := freePort(t)
			probe := []string{"cloned/.git/hooks/pre-commit", "cloned/.git/config", ".git/worktrees/wt/commondir"}
			mounts := []string{"cloned/.git/hooks", "cloned/.git/config", ".git/worktrees/wt/commondir"}
			change := "git clone -q ../src cloned && git worktree add -q wt && git -C wt status --short && echo made"
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), inPlaceScript(port, change, probe, mounts))
			if !strings.Contains(r.stdout, "made\n") {
				t.Errorf("git clone or git worktree add failed:\n%s\n%s", r.stdout, r.stderr)
			}
			checkInPlace(t, r, proj, probe, mounts)
		})
	}
}

// TestProtectInPlaceToolDir: a protected path that is no repository's
// and for which wsh makes no placeholder (.config/fish, of more than one
// component) made during a run: bound read-only in the live jail, the
// server goes on, and wsh says after the command that it was made.
func TestProtectInPlaceToolDir(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			port := freePort(t)
			probe := []string{".config/fish/config.fish"}
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), inPlaceScript(port, "mkdir -p .config/fish", probe, []string{".config/fish"}))
			checkInPlace(t, r, proj, probe, []string{".config/fish"})
			if _, err := os.Lstat(filepath.Join(proj, probe[0])); err == nil {
				t.Errorf("%s was written on the host", probe[0])
			}
			if !strings.Contains(r.stderr, "made "+filepath.Join(proj, ".config/fish")) {
				t.Errorf("wsh did not say that a command made .config/fish:\n%s", r.stderr)
			}
		})
	}
}

// TestProtectInPlaceSaysEarlierHook: what lands in a new repository's
// hooks before wsh binds them (written in the same command as the git
// init, as a job running meanwhile could) is there on the host, and wsh
// says so, naming the hook; later writes are refused.
func TestProtectInPlaceSaysEarlierHook(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			script := `sh -c 'git init -q && printf "#!/bin/sh\n" > .git/hooks/pre-commit'
/bin/true
` + inPlaceWriteProbe + ".git/hooks/post-checkout\n"
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), script)
			if r.status != 0 || r.stdout != ".git/hooks/post-checkout EROFS\n" {
				t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
			if !strings.Contains(r.stderr, "wsh: "+hook+" was written in a repository made during the run") {
				t.Errorf("wsh did not say the hook written before the bind:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, ".sample") {
				t.Errorf("wsh said git's samples:\n%s", r.stderr)
			}
		})
	}
}

// TestProtectorThreadState reads the session's PID 1 back from a command:
// one thread (the protector) keeps CAP_SYS_ADMIN alone, in its effective
// and bounding sets; every other thread has no effective capability (the
// Go runtime's had every one PID 1 started with); the thread that forks
// the commands (the main one, tid 1) keeps nothing; every thread has
// no_new_privs and a filter, and the main thread one more than the others
// (the mount calls, which a command inherits: TestContainment reads their
// refusal back).
func TestProtectorThreadState(t *testing.T) {
	const sysAdmin = "0000000000200000" // 1 << CAP_SYS_ADMIN
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			script := `for f in /proc/1/task/*/status; do echo "$(basename $(dirname $f)) $(awk '/^(CapEff|CapBnd|NoNewPrivs|Seccomp|Seccomp_filters):/ {printf "%s=%s ", $1, $2}' $f)"; done
python3 -c 'import errno, glob, os
for t in glob.glob("/proc/1/task/*"):
    if "\nCapEff:\t0000000000200000\n" not in open(t + "/status").read():
        continue
    for what, p, fl in (("mem", "/mem", os.O_RDWR), ("fd", "/fd/8", os.O_RDONLY), ("environ", "/environ", os.O_RDONLY)):
        try:
            os.close(os.open(t + p, fl)); print("reach", what, "opened")
        except OSError as e:
            print("reach", what, errno.errorcode[e.errno])'`
			r := runWsh(t, u, dir, sessionEnv, script)
			if r.status != 0 {
				t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			protectors := 0
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				f := strings.Fields(l)
				if len(f) == 0 || f[0] == "reach" {
					continue
				}
				kv := map[string]string{}
				for _, x := range f[1:] {
					k, v, _ := strings.Cut(x, "=")
					kv[k] = v
				}
				if kv["NoNewPrivs:"] != "1" || kv["Seccomp:"] != "2" {
					t.Errorf("thread %s of PID 1 without no_new_privs or filter: %s", f[0], l)
				}
				switch {
				// Every thread: the policy but the mount calls, and the git
				// config group; the fork thread: the mount calls on top.
				case f[0] == "1" && (kv["CapEff:"] != "0000000000000000" || kv["Seccomp_filters:"] != "3"):
					t.Errorf("the fork thread: %s", l)
				case kv["CapEff:"] == sysAdmin && kv["CapBnd:"] == sysAdmin && kv["Seccomp_filters:"] == "2":
					protectors++
				case kv["CapEff:"] != "0000000000000000":
					t.Errorf("thread %s of PID 1 has effective capabilities: %s", f[0], l)
				}
			}
			if protectors != 1 {
				t.Errorf("%d threads keep CAP_SYS_ADMIN alone, want 1 (the protector):\n%s", protectors, r.stdout)
			}
			// The protector's memory, its descriptors (the channel) and
			// its environment are out of a command's reach: PID 1 is not
			// dumpable, and a command has no CAP_SYS_PTRACE.
			for _, what := range []string{"mem", "fd", "environ"} {
				if !strings.Contains(r.stdout, "reach "+what+" EACCES\n") {
					t.Errorf("the protector's %s is not refused with EACCES:\n%s", what, r.stdout)
				}
			}
		})
	}
}

// TestProtectInPlaceLowerRungs: on the lower rungs, which have no mounts
// (and no server: their filter and Landlock refuse a listening socket), a
// repository made during a run does not end the session either (it never
// did): a job started before the git init goes on after it; the hooks stay
// writable there, and wsh says after the command that wrote one that it
// changed a protected path the rung cannot keep read-only.
func TestProtectInPlaceLowerRungs(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, u := range users {
			t.Run(rung.name+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				script := `sh -c 'while [ ! -e go ]; do sleep 0.01; done; echo alive > alive' &
git init -q
sh -c 'printf "#!/bin/sh\\n" > .git/hooks/pre-commit'; echo wrote
touch go
wait
cat alive
`
				r := runHostile(t, u, dir, []string{"WSH_JAIL=session"}, rung.mode, script)
				if r.status != 0 || r.stdout != "wrote\nalive\n" {
					t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				if strings.Contains(r.stderr, "the session's jail ends") || strings.Contains(r.stderr, "new session") {
					t.Errorf("the session was made anew:\n%s", r.stderr)
				}
				hooks := filepath.Join(dir, ".git", "hooks")
				if !strings.Contains(r.stderr, "changed "+hooks+", a protected path (the "+rung.name+" rung cannot keep it read-only)") {
					t.Errorf("wsh did not say the hook written:\n%s", r.stderr)
				}
			})
		}
	}
}

// pollFor is a shell loop that waits, at most 60 s, until the file f is
// there.
func pollFor(f string) string {
	return `i=0; until [ -e ` + f + ` ] || [ $i -ge 6000 ]; do sleep 0.01; i=$((i+1)); done`
}

// TestProtectInPlaceShellRedirection: the shell's own redirection right
// after git init (echo node_modules > .gitignore, a write done by the file
// server of the session's jail) binds the new repository's paths in the
// live jail as a command would: a job started before goes on, and the
// hooks are read-only afterwards.
func TestProtectInPlaceShellRedirection(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			script := `sh -c '` + pollFor("go") + `; echo alive > alive' &
git init -q
echo node_modules > .gitignore
touch go
wait
cat alive .gitignore
` + inPlaceWriteProbe + ".git/hooks/pre-commit\nset -- .git/hooks\n" + roMounts + "\n"
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), script)
			want := "alive\nnode_modules\n.git/hooks/pre-commit EROFS\nmount .git/hooks: ro,"
			if r.status != 0 || !strings.HasPrefix(r.stdout, want) {
				t.Errorf("status %d, want stdout beginning %q\nstdout:\n%s\nstderr:\n%s", r.status, want, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "the session's jail ends") || strings.Contains(r.stderr, "new session") {
				t.Errorf("the session was made anew:\n%s", r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(proj, ".git/hooks/pre-commit")); err == nil {
				t.Errorf("the hook was written on the host")
			}
		})
	}
}

// TestProtectInPlaceSaysLaterWrites: a job that worked in the new
// repository's hooks and held its config open before wsh bound them
// read-only writes through them after (its working directory and its
// descriptor are on the old, writable mount): a direct write is refused,
// and wsh says, once the run ends, the hook and the config key written.
func TestProtectInPlaceSaysLaterWrites(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			home, proj := homeProject(t, u)
			// The job tells through a FIFO that it is in the hooks with
			// the config open: no command of the session starts (and
			// binds the repository) before (read, a builtin, and its
			// redirection, a read, bind nothing).
			fifo := filepath.Join(proj, "inited")
			if err := syscall.Mkfifo(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(fifo, 0o666); err != nil {
				t.Fatal(err)
			}
			script := `sh -c 'git init -q; cd .git/hooks; exec 3>>../config; echo > ../../inited; ` + pollFor("../../go") + `
printf "#!/bin/sh\necho PWNED\n" > pre-commit; chmod +x pre-commit; printf "[core]\n\tfsmonitor = true\n" >&3' &
read x < inited
/bin/true
` + inPlaceWriteProbe + `.git/hooks/direct
touch go
wait
echo done
`
			r := runWsh(t, u, proj, append([]string{"HOME=" + home}, sessionEnv...), script)
			if r.status != 0 || r.stdout != ".git/hooks/direct EROFS\ndone\n" {
				t.Errorf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			hook := filepath.Join(proj, ".git", "hooks", "pre-commit")
			config := filepath.Join(proj, ".git", "config")
			if _, err := os.Lstat(hook); err != nil {
				t.Fatalf("the job's hook is not on the host (%v): the case is not made", err)
			}
			for _, want := range []string{
				filepath.Join(proj, ".git", "hooks") + " was changed after wsh made it read-only",
				hook,
				config + ", written after wsh made it read-only, sets core.fsmonitor",
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("wsh did not say %q:\n%s", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "cannot keep it read-only") {
				t.Errorf("said as on a lower rung:\n%s", r.stderr)
			}
		})
	}
}
