//go:build linux && cgo

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newProject makes a project directory in the home fixture, owned by its
// user, two hours old.
func (h *realHome) newProject(t *testing.T, name string) string {
	t.Helper()
	rel := name + "-" + uniqueNumber(0)
	plantOld(t, h.u, h.dir, filepath.Join(rel, "README"))
	return filepath.Join(h.dir, rel)
}

// TestHomePerProject: what a run in project A writes to the copy-on-write
// home (a .pth in the user site-packages, ~/.npmrc) is not in the home of
// a run in project B: B's python3 does not run A's .pth (nothing is
// written in B on the host) and B's ~/.npmrc is not A's; a later run in A
// sees A's writes again; what A wrote to the module cache and the build
// cache, B sees, but for the git repositories in the caches (go's vcs,
// cargo's db) and npx's installs, which are A's own.
func TestHomePerProject(t *testing.T) {
	site := userSite(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			a, b := h.newProject(t, "projA"), h.newProject(t, "projB")
			n := uniqueNumber(0)
			pwned := filepath.Join(b, "pwned-"+n)
			pth := filepath.Join(site, "wsh-e2e-"+n+".pth")
			mod := "go/pkg/mod/cache/wsh-e2e-" + n
			build := ".cache/go-build/wsh-e2e-" + n
			// Git repositories in the caches (go's vcs, cargo's db) and
			// npx's installs stay the project's own.
			own := []string{"go/pkg/mod/cache/vcs/wsh-e2e-" + n, ".cargo/git/db/wsh-e2e-" + n, ".npm/_npx/wsh-e2e-" + n}
			h.jailIn(t, a, `mkdir -p ~/`+strings.Join(own, " ~/")+` && `+
				`mkdir -p ~/`+site+` ~/`+mod+` ~/.cache/go-build && `+
				`echo 'import os; open("`+pwned+`", "w").write("A ran here")' > ~/`+pth+` && `+
				`echo 'registry=http://a-`+n+`.invalid/' > ~/.npmrc && `+
				`echo from-A > ~/`+mod+`/f && echo from-A > ~/`+build)

			got := h.jailIn(t, b, `python3 -c 'print("python ran")'; cat ~/.npmrc 2>&1; ls ~/`+pth+` 2>&1; cat ~/`+mod+`/f ~/`+build)
			if _, err := os.Lstat(pwned); err == nil {
				t.Errorf("project B's python3 ran project A's .pth: %s is on the host", pwned)
			}
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != 5 || lines[0] != "python ran" {
				t.Fatalf("project B's run:\n%s", got)
			}
			if strings.Contains(lines[1], "a-"+n) {
				t.Errorf("project B's ~/.npmrc is project A's: %s", lines[1])
			}
			if !strings.Contains(lines[2], "No such file") {
				t.Errorf("project A's .pth is in project B's home: %s", lines[2])
			}
			if lines[3] != "from-A" || lines[4] != "from-A" {
				t.Errorf("project B does not see what A wrote to the module cache and the build cache: %q", lines[3:])
			}

			if out := h.jailIn(t, b, `for d in ~/`+strings.Join(own, " ~/")+`; do [ -e $d ] && echo $d; done; true`); out != "" {
				t.Errorf("project B sees project A's git repositories or npx installs in the caches:\n%s", out)
			}
			if out := h.jailIn(t, a, `for d in ~/`+strings.Join(own, " ~/")+`; do [ -e $d ] || echo $d; done; true`); out != "" {
				t.Errorf("project A lost its own:\n%s", out)
			}
			// The directory between a shared cache and a project's own
			// place in it cannot be moved (with the own place's mount in
			// it, another project's repository would take its place).
			mv := `python3 -c 'import os,errno,sys
try:
    os.rename(sys.argv[1], sys.argv[1]+".x"); print("moved")
except OSError as e:
    print(errno.errorcode[e.errno])' ~/go/pkg/mod/cache`
			if out := h.jailIn(t, b, mv); out != "EBUSY\n" {
				t.Errorf("a command moved ~/go/pkg/mod/cache, which holds the project's own vcs: %q", out)
			}
			got = h.jailIn(t, a, `cat ~/.npmrc; ls ~/`+pth)
			if got != "registry=http://a-"+n+".invalid/\n"+filepath.Join(h.dir, pth)+"\n" {
				t.Errorf("project A's later run does not see A's writes:\n%s", got)
			}
			for _, p := range []string{".npmrc", pth, mod, build} {
				if _, err := os.Lstat(filepath.Join(h.dir, p)); err == nil {
					t.Errorf("~/%s, written in the jail, is on the host", p)
				}
			}
		})
	}
}

// TestHomeProjectConcurrentRuns: two runs in one project at once both
// have the project's home, and each sees what the other wrote to it.
func TestHomeProjectConcurrentRuns(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			p := h.newProject(t, "proj")
			workDir(t, u) // opens the test's temporary directory to u, for the gates
			up, goOn := gate(t, "up"), gate(t, "go")
			first := startBg(t, u, p, h.env(), `echo first > ~/first-run && echo up > `+up+` && read x < `+goOn+` && cat ~/second-run`)
			reached(t, first, up)
			if got := h.jailIn(t, p, `echo second > ~/second-run && cat ~/first-run`); got != "first\n" {
				t.Errorf("the second run of the project does not see the first's write: %q", got)
			}
			release(t, first, goOn)
			if r := first.wait(t); r.status != 0 || r.stdout != "second\n" {
				t.Errorf("the first run of the project: status %d, %q\n%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestHomeCommandLayers: wsh home names each project's layer and says
// what the shared layer holds from before per-project layers (a file an
// earlier wsh kept there), as the first run after it does, once; wsh home
// reset empties every layer, each named.
func TestHomeCommandLayers(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			a, b := h.newProject(t, "layerA"), h.newProject(t, "layerB")
			h.jailIn(t, a, "echo a > ~/layer-probe")
			h.jailIn(t, b, "echo b > ~/layer-probe")
			keys, _ := filepath.Glob(filepath.Join(h.stateDir(), "home", "*", "upper"))
			if len(keys) != 1 {
				t.Fatalf("the home's shared layers: %q", keys)
			}
			earlier := "earlier-" + uniqueNumber(0)
			writeOwned(t, u, filepath.Join(keys[0], earlier), "from an earlier wsh\n")
			os.Remove(filepath.Join(filepath.Dir(keys[0]), "earlier-said")) // an earlier test's run said its own
			// The next run says it, once; the run after does not.
			for i, want := range []bool{true, false} {
				r := runWsh(t, u, a, append(h.env(), jailEnv...), "true")
				if said := strings.Contains(r.stderr, earlier) && strings.Contains(r.stderr, "no jail sees it now"); r.status != 0 || said != want {
					t.Errorf("run %d after an earlier wsh's file in the shared layer: status %d, said %v, want %v:\n%s", i+1, r.status, said, want, r.stderr)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := wshCmd(ctx, u, a, h.env(), "home").CombinedOutput()
			for _, want := range []string{"project " + a + " (this one):", "project " + b + ":", "also:   " + earlier} {
				if err != nil || !strings.Contains(string(out), want) {
					t.Errorf("wsh home does not say %q: %v\n%s", want, err, out)
				}
			}
			out, err = wshCmd(ctx, u, a, h.env(), "home", "reset").CombinedOutput()
			for _, want := range []string{"emptied the layer of project " + a, "emptied the layer of project " + b, "emptied the shared layer"} {
				if err != nil || !strings.Contains(string(out), want) {
					t.Errorf("wsh home reset does not say %q: %v\n%s", want, err, out)
				}
			}
			if got := h.jailIn(t, b, "cat ~/layer-probe 2>&1 || true"); strings.TrimSpace(got) == "b" {
				t.Errorf("project B's layer is still there after wsh home reset")
			}
		})
	}
}

// TestHomeLayerPerScope: a run that may do less (started in a
// subdirectory of a repository, so only it is writable) keeps what it
// writes to the home from a run of the repository's top level, which may
// write all of it (the fourth review: a .pth so planted ran with the
// wider run's writes), and from a run of the same directory with the
// network.
func TestHomeLayerPerScope(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			sub := filepath.Join(h.proj, "sub")
			mkdirOwned(t, u, filepath.Join(h.proj, ".git"))
			mkdirOwned(t, u, sub)
			marker := "scope-" + uniqueNumber(0)
			h.jailIn(t, sub, "echo planted > ~/"+marker+" && cat ~/"+marker)
			for _, c := range []struct {
				dir string
				env []string
			}{{h.proj, nil}, {sub, []string{"WSH_NETWORK=proxy"}}} {
				r := runWsh(t, u, c.dir, append(h.env(c.env...), jailEnv...), "cat ~/"+marker+" 2>/dev/null || echo absent")
				if r.status != 0 || r.stdout != "absent\n" {
					t.Errorf("a run in %s %v sees what a run in %s wrote to the home: status %d\n%s%s", c.dir, c.env, sub, r.status, r.stdout, r.stderr)
				}
			}
			if out := h.jailIn(t, sub, "cat ~/"+marker); out != "planted\n" {
				t.Errorf("the run's own layer lost its file: %q", out)
			}
		})
	}
}
