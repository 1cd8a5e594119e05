//go:build linux && cgo

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// jailIn runs script in the jail as the home's user, in dir, with the
// home's environment plus env, and fails the test unless it exits 0.
func (h *realHome) jailIn(t *testing.T, dir string, script string, env ...string) string {
	t.Helper()
	return mustJail(t, h.u, dir, h.env(env...), script)
}

// TestHomeRealWork runs the everyday toolchains in the jail, in a project
// under a real home whose caches were filled on the host: what they write
// to the home lands in the jail's copy-on-write home, later commands (of
// later wsh runs) see it, and the host's home is unchanged.
func TestHomeRealWork(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			skip := []string{"proj", ".local/state/wsh"}
			before := h.snap(t, "proj")
			h.jailIn(t, h.proj, "true")
			first := h.snap(t, "proj")
			checkOnlyStateAdded(t, before, first)
			t.Run("go", func(t *testing.T) { h.checkGo(t) })
			t.Run("go env -w", func(t *testing.T) {
				h.jailIn(t, h.proj, "go env -w GOPRIVATE=example.invalid/wsh")
				if got := h.jailIn(t, h.proj, "go env GOPRIVATE"); got != "example.invalid/wsh\n" {
					t.Errorf("go env GOPRIVATE in a later command: %q", got)
				}
			})
			t.Run("git config --global", func(t *testing.T) {
				h.jailIn(t, h.proj, "git config --global wsh.test jailvalue")
				if got := h.jailIn(t, h.proj, "git config --global wsh.test; git config --global user.name"); got != "jailvalue\nHost User\n" {
					t.Errorf("git config --global in a later command: %q", got)
				}
			})
			t.Run("pip install --user", func(t *testing.T) { h.checkPip(t) })
			t.Run("npm install --offline", func(t *testing.T) { h.checkNpm(t) })
			after := h.snap(t, skip...)
			if d := h.snapWithout(first, skip).diff(after); len(d) > 0 {
				t.Errorf("the host's home changed:\n%s", strings.Join(d, "\n"))
			}
			if b, err := os.ReadFile(filepath.Join(h.dir, ".gitconfig")); err != nil || string(b) != hostGitcfg {
				t.Errorf("the host's ~/.gitconfig: %q, %v", b, err)
			}
		})
	}
}

// snapWithout drops from s what lies beneath skip.
func (h *realHome) snapWithout(s snapshot, skip []string) snapshot {
	out := snapshot{}
	for k, v := range s {
		keep := true
		for _, d := range skip {
			if k == d || strings.HasPrefix(k, d+"/") {
				keep = false
			}
		}
		if keep {
			out[k] = v
		}
	}
	return out
}

// checkOnlyStateAdded: the first run may create wsh's state directory, and
// nothing else: the only change beside it is its parent's mtime.
func checkOnlyStateAdded(t *testing.T, before, after snapshot) {
	t.Helper()
	for _, d := range before.diff(after) {
		// wsh's state: added, or changed or removed where a test before
		// this one ran wsh with the same home fixture (a generation's
		// lock of the home is removed when its mount is renewed).
		if strings.HasPrefix(d, "added: .local/state/wsh") || strings.HasPrefix(d, "changed: .local/state/wsh") ||
			strings.HasPrefix(d, "removed: .local/state/wsh/") || strings.HasPrefix(d, "changed: .local/state: ") {
			continue
		}
		t.Errorf("the first run changed the host's home: %s", d)
	}
}

// checkGo: go build, go vet and go test with a dependency from the module
// cache the host filled; a second go test is cached.
func (h *realHome) checkGo(t *testing.T) {
	out := h.jailIn(t, h.proj, "go build -o app ./cmd/app && ./app && go vet ./... && go test ./...")
	if !strings.HasPrefix(out, "hello\nok  \texample.com/proj\t") || strings.Contains(out, "(cached)") {
		t.Errorf("go build, vet and test in the jail:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(h.proj, "app")); err != nil {
		t.Errorf("the binary go build made in the project is not on the host: %v", err)
	}
	if out := h.jailIn(t, h.proj, "go test ./..."); !strings.Contains(out, "(cached)") {
		t.Errorf("a second go test in a later run is not cached:\n%s", out)
	}
}

// checkPip installs a local wheel with pip install --user and imports it
// in a later command.
func (h *realHome) checkPip(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("this check needs python3 with pip: %v", err)
	}
	h.jailIn(t, h.proj, "python3 -m pip install -q --user --no-index --break-system-packages --no-warn-script-location "+h.wheel)
	if got := h.jailIn(t, h.proj, "python3 -c 'import wshdemo; print(wshdemo.VALUE)'"); got != "42\n" {
		t.Errorf("importing the package pip installed, in a later command: %q", got)
	}
}

// checkNpm installs the package the host cached, without the network.
func (h *realHome) checkNpm(t *testing.T) {
	if h.registry == "" {
		t.Fatalf("this check needs npm")
	}
	dir := filepath.Join(h.proj, "npmproj")
	h.jailIn(t, h.proj, "mkdir -p npmproj")
	h.jailIn(t, dir, "npm install --offline --no-audit --no-fund --loglevel=error --registry="+h.registry+" "+npmPackage+"@1.0.0", npmEnv...)
	if got := h.jailIn(t, dir, `node -e 'console.log(require("`+npmPackage+`").value)'`); got != "42\n" {
		t.Errorf("the package npm installed: %q", got)
	}
}

// TestHomeWritesStayInTheJail reads the jail's mount table back: the home
// is an overlay whose upper directory is in wsh's state directory, the
// project is the host's own directory, and the state directory is covered.
// A file written to the home is seen by a later jail, not by the host.
func TestHomeWritesStayInTheJail(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			mi := h.jailIn(t, h.proj, "cat /proc/self/mountinfo")
			home := mountAt(t, mi, h.dir)
			if home.fstype != "overlay" || !strings.Contains(home.super, "upperdir="+h.stateDir()+"/") {
				t.Errorf("the jail's home is %s (%s), want an overlay with its upper directory in %s", home.fstype, home.super, h.stateDir())
			}
			if p := mountAt(t, mi, h.proj); p.fstype == "overlay" || !strings.HasPrefix(p.opts, "rw") {
				t.Errorf("the project under the home is %s %s, want the host's file system, read-write", p.fstype, p.opts)
			}
			if s := mountAt(t, mi, h.stateDir()); s.fstype != "tmpfs" || !strings.HasPrefix(s.opts, "ro") {
				t.Errorf("wsh's state directory is %s %s in the jail, want covered (a read-only tmpfs)", s.fstype, s.opts)
			}
			name := "x-" + uniqueNumber(0)
			h.jailIn(t, h.proj, "echo in-the-jail > ~/"+name)
			if _, err := os.Lstat(filepath.Join(h.dir, name)); err == nil {
				t.Errorf("~/%s, written in the jail, is on the host", name)
			}
			if got := h.jailIn(t, h.proj, "cat ~/"+name); got != "in-the-jail\n" {
				t.Errorf("~/%s in a later jail: %q", name, got)
			}
		})
	}
}

// A mount is one line of mountinfo.
type mount struct{ point, opts, fstype, super string }

// mountAt returns the mount in force at point: the last one mounted there.
func mountAt(t *testing.T, mountinfo, point string) mount {
	t.Helper()
	var m mount
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 || f[4] != point {
			continue
		}
		m = mount{point: f[4], opts: f[5], fstype: g[0], super: g[2]}
	}
	if m.point == "" {
		t.Errorf("no mount at %s in the jail:\n%s", point, mountinfo)
	}
	return m
}

// TestHomeStateOutOfReach: jailed commands cannot read wsh's state
// directory (the copy-on-write home's layers), nor can the shell itself.
func TestHomeStateOutOfReach(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			h.jailIn(t, h.proj, "echo x > ~/state-probe")
			r := runWsh(t, u, h.proj, append(h.env(), jailEnv...), "ls -a ~/.local/state/wsh")
			if r.status == 0 || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("ls of the state directory in the jail: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			// The glob finds nothing to list (it stays as written), and a
			// read is refused.
			r = runWsh(t, u, h.proj, append(h.env(), jailEnv...), "for f in ~/.local/state/wsh/*; do echo \"entry $f\"; done; read x < ~/.local/state/wsh/home")
			glob := "entry " + h.stateDir() + "/*\n"
			if r.status == 0 || !strings.Contains(r.stderr, "Permission denied") || r.stdout != glob {
				t.Errorf("the state directory, in process: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestHomeHiddenInside: a path of the home in WSH_HIDE stays hidden in the
// copy-on-write home.
func TestHomeHiddenInside(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			env := append(h.env("WSH_HIDE="+filepath.Join(h.dir, ".ssh")), jailEnv...)
			r := runWsh(t, u, h.proj, env, "cat ~/.ssh/id_test")
			if r.status == 0 || strings.Contains(r.stdout, "secret") || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("a hidden file of the home, in the jail: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestHomeReadonly: WSH_HOME=readonly keeps the home read-only, as it was.
func TestHomeReadonly(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			r := runWsh(t, u, h.proj, append(h.env("WSH_HOME=readonly"), jailEnv...), "touch ~/readonly-probe")
			if r.status == 0 || !strings.Contains(r.stderr, "Read-only file system") {
				t.Errorf("touch in the home with WSH_HOME=readonly: status %d\n%s", r.status, r.stderr)
			}
		})
	}
}

// TestHomeConcurrentGoTest runs two wsh at once, each go test in its own
// project under the same home, ten times: both pass every time, and
// neither loses the other's build cache (both are cached afterwards).
func TestHomeConcurrentGoTest(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			names := []string{"proja", "projb"}
			var projs []string
			for _, n := range names {
				p := filepath.Join(h.dir, n)
				if err := writeGoProject(p, n, ""); err != nil {
					t.Fatal(err)
				}
				projs = append(projs, p)
			}
			if err := h.own(); err != nil {
				t.Fatal(err)
			}
			for round := range 10 {
				// A change in each project each round: both compile, and
				// write the build cache, at the same time.
				for i, p := range projs {
					src := fmt.Sprintf("package %s\n\nconst round = %d\n", names[i], round)
					writeOwned(t, u, filepath.Join(p, "round.go"), src)
				}
				var wg sync.WaitGroup
				outs := make([]result, len(projs))
				for i, p := range projs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						outs[i] = h.run(t, p, "go test ./...")
					}()
				}
				wg.Wait()
				for i, r := range outs {
					if r.status != 0 || !strings.HasPrefix(r.stdout, "ok  \t") {
						t.Fatalf("round %d: go test in %s: status %d\n%s%s", round, projs[i], r.status, r.stdout, r.stderr)
					}
				}
				for _, p := range projs {
					if out := h.jailIn(t, p, "go test ./..."); !strings.Contains(out, "(cached)") {
						t.Fatalf("round %d: the build cache lost what go test in %s wrote:\n%s", round, p, out)
					}
				}
			}
		})
	}
}

// run is jailIn that returns the result instead of failing.
func (h *realHome) run(t *testing.T, dir, script string) result {
	return h.runEnv(t, dir, nil, script)
}

// runEnv is run with env added.
func (h *realHome) runEnv(t *testing.T, dir string, env []string, script string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, h.u, dir, append(append(h.env(), jailEnv...), env...), "-c", script)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if cmd.ProcessState == nil {
		return result{stderr: "wsh did not run", status: -1}
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// TestHomeCommand: wsh home shows the state directory and its size; wsh
// home reset empties the jail's home, and refuses while a wsh uses it.
func TestHomeCommand(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			h.jailIn(t, h.proj, "echo kept > ~/reset-probe")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := wshCmd(ctx, u, h.proj, h.env(), "home").CombinedOutput()
			if err != nil || !strings.Contains(string(out), h.stateDir()) {
				t.Errorf("wsh home: %v\n%s", err, out)
			}
			busy := startWsh(t, u, h.proj, append(h.env(), jailEnv...), "echo started; sleep 30")
			busy.waitLine(t, "started")
			r := wshCmd(ctx, u, h.proj, h.env(), "home", "reset")
			out, _ = r.CombinedOutput()
			if r.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "in use") {
				t.Errorf("wsh home reset while a wsh runs: status %d\n%s", r.ProcessState.ExitCode(), out)
			}
			busy.cmd.Process.Kill()
			busy.wait(t, 10*time.Second)
			out, err = wshCmd(ctx, u, h.proj, h.env(), "home", "reset").CombinedOutput()
			if err != nil {
				t.Fatalf("wsh home reset: %v\n%s", err, out)
			}
			r2 := runWsh(t, u, h.proj, append(h.env(), jailEnv...), "cat ~/reset-probe")
			if r2.status == 0 {
				t.Errorf("~/reset-probe is still in the jail's home after wsh home reset: %q", r2.stdout)
			}
		})
	}
}

// TestHomeShellSeesTheHome: the shell's own operations see the jail's
// home, not the host's: a redirection writes into it, cd enters a
// directory a command made there, test, globbing and the command search
// find what is there. None of it is on the host.
func TestHomeShellSeesTheHome(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			d := "shellsees-" + uniqueNumber(0)
			script := `mkdir -p ~/` + d + `/bin &&
printf '#!/bin/sh\necho tool-ran\n' > ~/` + d + `/bin/mytool &&
chmod +x ~/` + d + `/bin/mytool &&
cd ~/` + d + ` && pwd &&
PATH=$HOME/` + d + `/bin:$PATH mytool &&
[ -x ~/` + d + `/bin/mytool ] && echo test-x &&
for f in ~/` + d + `/bin/*; do echo "glob $f"; done &&
read line < bin/mytool && echo "read $line"`
			got := h.jailIn(t, h.proj, script)
			want := filepath.Join(h.dir, d) + "\ntool-ran\ntest-x\nglob " + filepath.Join(h.dir, d, "bin", "mytool") + "\nread #!/bin/sh\n"
			if got != want {
				t.Errorf("the shell and the jail's home:\n%s\nwant:\n%s", got, want)
			}
			if _, err := os.Lstat(filepath.Join(h.dir, d)); err == nil {
				t.Errorf("~/%s, made in the jail's home, is on the host", d)
			}
		})
	}
}

// TestHomeHostMountsBeneath: a mount of the host beneath the home, which
// an overlay does not show, is shown in the jail's home, read-only as the
// rest of the host. For a user other than root the kernel refuses an
// overlay over a directory with a mount beneath it: the home is then
// read-only, and the first command says why. (The mount is made in a
// throwaway mount namespace.)
func TestHomeHostMountsBeneath(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			mnt := filepath.Join(h.dir, "mnt-"+uniqueNumber(0))
			if err := os.Mkdir(mnt, 0o755); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(mnt)
			as := ""
			if u.uid >= 0 {
				as = fmt.Sprintf("setpriv --reuid %d --regid %d --clear-groups ", u.uid, u.uid)
			}
			inner := `cat "$1/f"; touch "$1/g"; echo x > ~/mounts-probe && cat ~/mounts-probe`
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "unshare", "-m", "--propagation", "private", "sh", "-c",
				`mount -t tmpfs -o size=1m,mode=0777 wsh-e2e "$1" && echo on-the-mount > "$1/f" && cd "$3" && exec `+as+`"$2" -c "$4" wsh "$1"`,
				"sh", mnt, wshBin, h.proj, inner)
			cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, append(h.env(), jailEnv...)...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			out, errs := stdout.String(), stderr.String()
			if !strings.HasPrefix(out, "on-the-mount\n") || !strings.Contains(errs, "Read-only file system") {
				t.Errorf("a host mount beneath the home, in the jail:\n%s%s\nwant its file, and a write refused (EROFS)", out, errs)
			}
			switch {
			case u.uid < 0 && (!strings.HasSuffix(out, "x\n") || strings.Contains(errs, "home is read-only")):
				t.Errorf("root's home with a mount beneath it is not copy-on-write:\n%s%s", out, errs)
			case u.uid >= 0 && !strings.Contains(errs, "wsh: the jail's home is read-only: a file system is mounted beneath the home ("+mnt+")"):
				t.Errorf("no notice that the home is read-only because of the mount beneath it:\n%s%s", out, errs)
			}
		})
	}
}

// TestHomeHiddenMovedAway: a hidden file in a writable path of the home
// (the project) whose directory a command moves is never uncovered where
// it went: the next jail fails instead.
func TestHomeHiddenMovedAway(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			d := "secrets-" + uniqueNumber(0)
			if err := os.MkdirAll(filepath.Join(h.proj, d), 0o755); err != nil {
				t.Fatal(err)
			}
			writeOwned(t, u, filepath.Join(h.proj, d, "key"), "APIKEY-42\n")
			h.own()
			env := append(h.env("WSH_HIDE="+filepath.Join(h.proj, d, "key")), jailEnv...)
			r := runWsh(t, u, h.proj, env, "cat "+d+"/key; mv "+d+" "+d+"-moved; /bin/cat "+d+"-moved/key")
			if strings.Contains(r.stdout, "APIKEY") {
				t.Errorf("the hidden file, moved by a command, was read:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestHomeHiddenOnlyInTheHome: a hidden path that exists only in the
// copy-on-write home (a command made it there) is covered as well.
func TestHomeHiddenOnlyInTheHome(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			d := ".config/tool-" + uniqueNumber(0)
			h.jailIn(t, h.proj, "mkdir -p ~/"+d+" && echo TOKEN123 > ~/"+d+"/token")
			env := append(h.env("WSH_HIDE="+filepath.Join(h.dir, d)), jailEnv...)
			r := runWsh(t, u, h.proj, env, "/bin/cat ~/"+d+"/token")
			// Denied where the run sees the earlier run's layer; absent
			// since WSH_HIDE is part of the layer's scope (a run that
			// hides more has a layer of its own): the token is not read.
			if r.status == 0 || strings.Contains(r.stdout, "TOKEN") ||
				!strings.Contains(r.stderr, "Permission denied") && !strings.Contains(r.stderr, "No such file or directory") {
				t.Errorf("a hidden path made in the jail's home: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestHomeStateNotInAWritablePath: wsh's state directory in a writable
// path (here XDG_STATE_HOME in /tmp) could be changed by commands on the
// host: the home is then read-only, and the first command says why.
func TestHomeStateNotInAWritablePath(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			x := filepath.Join(workDir(t, u), "state")
			r := runWsh(t, u, h.proj, append(h.env("XDG_STATE_HOME="+x), jailEnv...), "touch ~/state-probe-"+uniqueNumber(0))
			if r.status == 0 || !strings.Contains(r.stderr, "Read-only file system") ||
				!strings.Contains(r.stderr, "wsh: the jail's home is read-only: wsh's state directory "+x+"/wsh lies in the writable path") {
				t.Errorf("the state directory in /tmp: status %d\n%s", r.status, r.stderr)
			}
		})
	}
}

// TestHomeSeesHostChanges: the jail's home shows what the host changed in
// the home since an earlier jail looked: a file replaced, and one made.
// (The keeper mounts the overlay anew once nothing uses the old mount and
// it is a second old, launch.KeeperRefresh.)
func TestHomeSeesHostChanges(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			name := "hostcfg-" + uniqueNumber(0)
			writeOwned(t, u, filepath.Join(h.dir, name), "v1\n")
			if got := h.jailIn(t, h.proj, "cat ~/"+name+"; cat ~/"+name+".new 2>/dev/null; true"); got != "v1\n" {
				t.Fatalf("the host's file in the jail: %q", got)
			}
			writeOwned(t, u, filepath.Join(h.dir, name+".tmp"), "v2\n")
			if err := os.Rename(filepath.Join(h.dir, name+".tmp"), filepath.Join(h.dir, name)); err != nil {
				t.Fatal(err)
			}
			writeOwned(t, u, filepath.Join(h.dir, name+".new"), "new\n")
			time.Sleep(1500 * time.Millisecond)
			if got := h.jailIn(t, h.proj, "cat ~/"+name+" ~/"+name+".new; read x < ~/"+name+"; echo \"in process: $x\""); got != "v2\nnew\nin process: v2\n" {
				t.Errorf("after the host changed the home, the jail shows:\n%s", got)
			}
		})
	}
}

// TestHomeStdinFromTheHome: a file or directory of the home given to a
// command as its standard input (opened by the shell, through its view of
// the home) is opened again in the jail's own home: the command reads it,
// and a hidden path beneath the directory stays covered.
func TestHomeStdinFromTheHome(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			env := append(h.env("WSH_HIDE="+filepath.Join(h.dir, ".ssh")), jailEnv...)
			r := runWsh(t, u, h.proj, env, "echo from-the-home > ~/stdin-probe; wc -c < ~/stdin-probe; ls /proc/self/fd/0/ < ~ | grep -c stdin-probe; cat /proc/self/fd/0/.ssh/id_test < ~")
			if !strings.HasPrefix(r.stdout, "14\n1\n") || strings.Contains(r.stdout, "secret") || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("standard input from the home: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestStartDirectoryNotWritable: wsh started in the root, in or beneath a
// system directory, in the directory that holds the home, or in the home
// does not make it writable (the home is then the copy-on-write one); the
// first command says so once. WSH_WRITABLE still can.
func TestStartDirectoryNotWritable(t *testing.T) {
	name := "wsh-e2e-startdir-" + uniqueNumber(0)
	// Directories beneath system directories, open to every user: were one
	// writable in the jail, the nobody user's touch would work too.
	var sub []string
	for _, d := range []string{"/etc/" + name + ".d", "/var/lib/" + name, "/usr/local/lib/" + name} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
		sub = append(sub, d)
	}
	t.Cleanup(func() {
		for _, d := range sub {
			os.Remove(d + "/" + name)
			os.Remove(d)
		}
		os.Remove("/etc/" + name)
		os.Remove("/" + name)
	})
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			for _, dir := range append([]string{"/", "/etc"}, sub...) {
				r := runWsh(t, u, dir, append(h.env(), jailEnv...), "touch "+name+"; touch "+name)
				if r.status == 0 || !strings.Contains(r.stderr, "Read-only file system") ||
					strings.Count(r.stderr, "wsh: the start directory is not writable in the jail: "+dir+" is a system directory") != 1 {
					t.Errorf("started in %s: status %d\n%s", dir, r.status, r.stderr)
				}
			}
			// The directory that holds the home: the home's rc files would
			// be writable on the host.
			parent := filepath.Dir(h.dir)
			rc := ".wshrc-" + uniqueNumber(0)
			r := runWsh(t, u, parent, append(h.env(), jailEnv...), "touch "+filepath.Base(h.dir)+"/"+rc)
			if !strings.Contains(r.stderr, parent+" holds the home directory "+h.dir) {
				t.Errorf("started in %s, which holds the home: status %d\n%s", parent, r.status, r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(h.dir, rc)); err == nil {
				os.Remove(filepath.Join(h.dir, rc))
				t.Errorf("started in %s, a command wrote to the host's home", parent)
			}
			f := "startdir-" + uniqueNumber(0)
			r = runWsh(t, u, h.dir, append(h.env(), jailEnv...), "touch "+f+" && cat "+f)
			if r.status != 0 || !strings.Contains(r.stderr, "wsh: the start directory is the home: what commands write there goes to the jail's copy-on-write home") {
				t.Errorf("started in the home: status %d\n%s", r.status, r.stderr)
			}
			if _, err := os.Lstat(filepath.Join(h.dir, f)); err == nil {
				t.Errorf("started in the home, a file made in it is on the host")
			}
			r = runWsh(t, u, h.dir, append(h.env("WSH_WRITABLE="+h.dir), jailEnv...), "touch "+f)
			defer os.Remove(filepath.Join(h.dir, f))
			if _, err := os.Lstat(filepath.Join(h.dir, f)); r.status != 0 || err != nil || strings.Contains(r.stderr, "start directory") {
				t.Errorf("started in the home named in WSH_WRITABLE: status %d, %v\n%s", r.status, err, r.stderr)
			}
		})
	}
}

// TestHomeBrokenByAnotherRun: a run whose jails replaced, in its
// project's copy-on-write home, a directory with a file cannot break the
// home of a run that makes that directory writable: that run is of
// another scope (its writable paths), whose layer is its own. (Before
// layers per scope, it failed that run's home, which was then read-only
// for the run and said so; that path has no e2e test now: a layer of one
// scope cannot be made so by its own jails, in which the path is the
// host's.)
func TestHomeBrokenByAnotherRun(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			name := "data-" + uniqueNumber(0)
			data := filepath.Join(h.dir, name)
			mkdirOwned(t, u, data)
			writeOwned(t, u, filepath.Join(data, "f"), "host\n")
			h.jailIn(t, h.proj, "rm -r ~/"+name+" && echo replaced > ~/"+name)
			env := append(h.env("WSH_WRITABLE="+data), jailEnv...)
			script := "/bin/cat ~/" + name + "/f && /bin/touch ~/" + name + "/g && echo wrote; /bin/touch ~/other-" + name + " && echo home"
			if r := runWsh(t, u, h.proj, env, script); r.status != 0 || r.stdout != "host\nwrote\nhome\n" || strings.Contains(r.stderr, "read-only") {
				t.Errorf("a run of another scope saw the first run's layer: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(data, "g")); err != nil {
				t.Errorf("the write to the writable path did not reach the host: %v", err)
			}
		})
	}
}

// TestHomeHiddenSymlinkRepointed: a hidden path of the home that the host
// makes, while wsh runs, a symlink to a directory elsewhere is covered
// where it leads; a command that then removes or re-points the symlink in
// the copy-on-write home does not uncover that directory for later
// commands: wsh keeps covering what a hidden path led to.
func TestHomeHiddenSymlinkRepointed(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			name := ".aws-" + uniqueNumber(0)
			secret, err := os.MkdirTemp("/var", "wsh-e2e-secret-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(secret) })
			os.Chmod(secret, 0o755)
			writeOwned(t, u, filepath.Join(secret, "key"), "AWSKEY-77\n")
			fifo := filepath.Join(h.proj, "go-"+uniqueNumber(0))
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			mustChown(t, fifo, u.uid)
			t.Cleanup(func() { os.Remove(fifo) })
			env := append(h.env("WSH_HIDE="+filepath.Join(h.dir, name)), jailEnv...)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			script := "read x < " + fifo + "; sleep 1.5; cat ~/" + name + "/key; echo \"through the link: $?\"; rm ~/" + name +
				"; cat " + secret + "/key; echo \"after: $?\""
			cmd := wshCmd(ctx, u, h.proj, env, "-c", script)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The host makes the hidden path, as a symlink, once wsh runs
			// its script (it opened the FIFO).
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(h.dir, name)
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(link) })
			w.Write([]byte("go\n"))
			w.Close()
			cmd.Wait()
			got := out.String()
			if !strings.Contains(got, "through the link: 1") {
				t.Fatalf("the hidden path the host made was not covered where it leads:\n%s", got)
			}
			if strings.Contains(got, "AWSKEY") || !strings.Contains(got, "after: 1") {
				t.Errorf("what a hidden path led to was uncovered once a command removed the symlink:\n%s", got)
			}
		})
	}
}
