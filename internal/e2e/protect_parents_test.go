//go:build linux && cgo

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"wsh/internal/protect"
)

// parentInner are paths inside a parent name that a tool reads, the
// config an attack writes (a rustc-wrapper, a JVM option, a
// repository's config, a package).
var parentInner = []string{".cargo/config.toml", ".mvn/jvm.config", ".git/config", "node_modules/x",
	".claude/settings.json"}

// parentProject makes /TMP/T/work/proj, owned by u, and returns work and
// proj.
func parentProject(t *testing.T, u user) (work, proj string) {
	t.Helper()
	work = filepath.Join(workDir(t, u), "work")
	proj = filepath.Join(work, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if u.uid >= 0 {
		for _, d := range []string{work, proj} {
			if err := os.Chown(d, u.uid, u.uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	return work, proj
}

// parentAttempts are scripts that try, with the probe, every way to
// make each parent name in each of dirs (names), and each inner path,
// its directory made first where a command can (inner): a line each,
// "PATH: way=errno ...". Nothing is removed: in /tmp, another user's
// entry could be.
func parentAttempts(dirs ...string) (names, inner string, n int) {
	var ns, in []string
	for _, d := range dirs {
		for _, name := range protect.ParentNames() {
			ns = append(ns, filepath.Join(d, name))
		}
		for _, p := range parentInner {
			in = append(in, filepath.Join(d, p))
		}
	}
	names = `for p in ` + strings.Join(ns, " ") + `; do echo "$p: $("$PROBE" make "$p")"; done
`
	inner = `for p in ` + strings.Join(in, " ") + `; do mkdir -p "$(dirname "$p")" 2>/dev/null; echo "$p: $("$PROBE" make "$p")"; done
`
	return names, inner, len(ns) + len(in)
}

// tmpNames is which of the table's names /tmp holds now, by inode:
// other processes use /tmp meanwhile, so only these are compared.
func tmpNames(t *testing.T) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, n := range protect.ParentNames() {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join("/tmp", n), &st); err == nil {
			out[n] = st.Ino
		}
	}
	return out
}

// tmpInodes is a script that prints, in the jail, the inode of each
// name of the table in /tmp, "ino NAME INODE" ("ino NAME" where there is
// none).
func tmpInodes() string {
	return `for n in ` + strings.Join(protect.ParentNames(), " ") + `; do echo "ino $n $(stat -c %i "/tmp/$n" 2>/dev/null)"; done
`
}

// removePlanted removes from /tmp, should a command of a failing run
// have made them, the names of the table that were not there before and
// that hold only what the probe writes: its file ("planted"), its
// symlink (to /tmp), directories of those (not an empty directory:
// another run's placeholder).
func removePlanted(before map[string]uint64) {
	var planted func(p string) bool
	planted = func(p string) bool {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return false
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			return l == "/tmp"
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			return string(b) == "planted\n"
		case !fi.IsDir():
			return false
		}
		// Not an empty one: another run's placeholder, which it holds.
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if !planted(filepath.Join(p, e.Name())) {
				return false
			}
		}
		return len(ents) > 0
	}
	for _, n := range protect.ParentNames() {
		p := filepath.Join("/tmp", n)
		if _, was := before[n]; !was && planted(p) {
			os.RemoveAll(p)
		}
	}
}

// TestParentNamesCannotBeMade: a command cannot make, by any way (a
// write, mkdir, a symlink, a rename onto it: each errno read back), a
// config name that host tools read from parent directories, nor the
// config inside one (.cargo/config.toml), in /tmp itself or in the
// directory of /tmp above its start directory; after the run the host
// lists them as before (wsh's placeholders removed). The control: the
// same probe unconfined, in a throwaway namespace, makes them all.
func TestParentNamesCannotBeMade(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work, proj := parentProject(t, u)
			before, tmpBefore := listing(t, work), tmpNames(t)
			t.Cleanup(func() { removePlanted(tmpBefore) })
			names, inner, n := parentAttempts("..", "/tmp")
			r := runWsh(t, u, proj, append([]string{"PROBE=" + probe}, jailEnv...), tmpInodes()+inner+names)
			var lines []string
			inJail := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "ino" {
					inJail[f[1]] = strings.Join(f[2:], "")
				} else {
					lines = append(lines, l)
				}
			}
			if r.status != 0 || len(lines) != n || len(inJail) != len(protect.ParentNames()) {
				t.Fatalf("status %d, %d attempts of %d:\n%s%s", r.status, len(lines), n, r.stdout, r.stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "=ok") {
					t.Errorf("a command made a parent name: %s", l)
				}
			}
			sameListing(t, work, before, "the attempts", r)
			// Each name was there in the jail (a placeholder where the
			// host had none), and what wsh made is gone from the host.
			now := tmpNames(t)
			for _, name := range protect.ParentNames() {
				ino, was := tmpBefore[name]
				switch {
				case inJail[name] == "":
					t.Errorf("/tmp/%s was not there in the jail", name)
				case was && now[name] != ino:
					t.Errorf("/tmp/%s changed on the host: inode %d before the run, %d after", name, ino, now[name])
				case !was && strconv.FormatUint(now[name], 10) == inJail[name]:
					t.Errorf("/tmp/%s, made for the run (inode %s), is still there after it", name, inJail[name])
				}
			}

			// The control: unconfined, the probe makes them in work, and
			// in a /tmp of the namespace's own (a tmpfs: not the host's,
			// which other processes use), each name, then, once they
			// are removed, each inner path. The probe lies in /tmp: it
			// runs through a descriptor opened before the tmpfs covers it.
			names, inner, _ = parentAttempts("..")
			clean := `rm -rf ` + strings.Join(protect.ParentNames(), " ") + "\n"
			out := unshared(t, u, proj, names+"cd .. && "+clean+"cd proj\n"+inner, "PROBE="+probe)
			names, inner, _ = parentAttempts("/tmp")
			out += unshared(t, u, proj, `exec 9<"$PROBE"; PROBE=/proc/self/fd/9; mount -t tmpfs none /tmp || exit 1
`+names+"cd /tmp && "+clean+inner, "PROBE="+probe)
			for _, name := range append(protect.ParentNames(), parentInner...) {
				for _, p := range []string{filepath.Join("..", name), filepath.Join("/tmp", name)} {
					if !strings.Contains(out, p+": write=ok") {
						t.Errorf("control: unconfined, %s was not written:\n%s", p, out)
					}
				}
			}
		})
	}
}

// TestParentPlaceholdersReadAsAbsent: while a run holds them, the host's
// git and go, in a directory below the placeholders (beside the start
// directory), read them as absent: git finds no repository, go no
// workspace and no module.
func TestParentPlaceholdersReadAsAbsent(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work, proj := parentProject(t, u)
			other := filepath.Join(work, "other")
			if err := os.Mkdir(other, 0o755); err != nil {
				t.Fatal(err)
			}
			in, out := gate(t, "in"), gate(t, "out")
			b := startBg(t, u, proj, nil, `echo up > `+in+`; read x < `+out)
			reached(t, b, in)
			for _, n := range []string{".git", "go.work", "go.mod"} {
				if fi, err := os.Lstat(filepath.Join(work, n)); err != nil || !fi.IsDir() {
					t.Errorf("%s is not a placeholder directory while the run lasts: %v", n, err)
				}
			}
			host := func(name string, args ...string) string {
				cmd := exec.Command(name, args...)
				cmd.Dir = other
				cmd.Env = []string{"PATH=/usr/local/go/bin:/usr/bin:/bin", "HOME=" + other, "GIT_CONFIG_NOSYSTEM=1", "GOTOOLCHAIN=local"}
				o, _ := cmd.CombinedOutput()
				return strings.TrimSpace(string(o))
			}
			if got := host("git", "rev-parse", "--show-toplevel"); !strings.Contains(got, "not a git repository") {
				t.Errorf("git below a placeholder .git: %q, want not a git repository", got)
			}
			if got := host("go", "env", "GOWORK", "GOMOD"); got != "\n/dev/null" && got != "/dev/null" {
				t.Errorf("go env GOWORK GOMOD below placeholders: %q, want none and /dev/null", got)
			}
			release(t, b, out)
			if r := b.wait(t); r.status != 0 {
				t.Fatalf("status %d: %s", r.status, r.stderr)
			}
		})
	}
}

// TestParentNameMadeOnLowerRung: on the landlock rung, which cannot keep
// a name from being made (wsh makes no placeholder there), a parent name
// a command makes above its start directory is said after the command,
// once, by its path; so is one the shell's own redirection makes, done
// under the same Landlock domain. (Not tried in /tmp: there the command's
// file would be the host's.)
func TestParentNameMadeOnLowerRung(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work, proj := parentProject(t, u)
			r := runHostile(t, u, proj, nil, cloneEPERM.arg,
				`sh -c "mkdir ../.cargo && echo '[build]' > ../.cargo/config.toml; echo x > ../conftest.py"; echo x > ../GEMINI.md; /bin/true`)
			if said := "wsh: the shell's redirection made " + filepath.Join(work, "GEMINI.md") + ", a protected path that was missing"; strings.Count(r.stderr, said) != 1 {
				t.Errorf("the shell's own redirection to ../GEMINI.md on the landlock rung, want %q once:\n%s", said, r.stderr)
			}
			for _, n := range []string{".cargo", "conftest.py"} {
				said := "wsh: a command made " + filepath.Join(work, n) + ", a protected path that was missing"
				if strings.Count(r.stderr, said) != 1 {
					t.Errorf("%s made on the landlock rung: status %d, want %q once:\n%s", n, r.status, said, r.stderr)
				}
			}
		})
	}
}

// TestParentNamesFreeInProject: in its own start directory, and beneath
// it, a command makes the names of the table as its work (git init, a
// go.work, a pyproject.toml, node_modules): they are the project's.
func TestParentNamesFreeInProject(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			_, proj := parentProject(t, u)
			// A home elsewhere: the harness's is the start directory.
			home := []string{"HOME=" + workDir(t, u)}
			out := mustJail(t, u, proj, home, `git init -q . && mkdir sub && cd sub && git init -q . && cd .. &&
for d in . sub; do (cd $d && touch go.work pyproject.toml conftest.py CLAUDE.md AGENTS.md && mkdir node_modules .cargo .mvn && echo x > .cargo/config.toml) || exit 1; done
git rev-parse --show-toplevel`)
			if strings.TrimSpace(out) != proj {
				t.Errorf("git in the start directory: %q, want %s", out, proj)
			}
			for _, p := range []string{".git/HEAD", "go.work", "sub/.cargo/config.toml", "sub/node_modules", "sub/.git/HEAD"} {
				if _, err := os.Lstat(filepath.Join(proj, p)); err != nil {
					t.Errorf("%s, made in the project, is not on the host: %v", p, err)
				}
			}
		})
	}
}

// TestParentPlaceholdersSharedByTwoRuns: root's run makes the
// placeholders in /tmp, and a run of uid 65534 started meanwhile holds
// them too; when root's run ends first, it keeps them (the other holds
// them), and the command of that run that was running then still cannot
// make the config in them.
// Root's next run, in another project with another home, removes them
// (the ledger of /tmp's placeholders is the user's, not the home's):
// none of the inodes the jails saw is left in /tmp.
func TestParentPlaceholdersSharedByTwoRuns(t *testing.T) {
	probe := probeBin(t)
	tmpBefore := tmpNames(t)
	t.Cleanup(func() { removePlanted(tmpBefore) })
	type run struct {
		b             *bgWsh
		in, out, proj string
	}
	start := func(u user, proj string, env ...string) *run {
		r := &run{in: gate(t, "in"), out: gate(t, "out"), proj: proj}
		_, inner, _ := parentAttempts("/tmp")
		// One command waits and then tries: its jail is the one made
		// before the other run ended.
		r.b = startBg(t, u, proj, append([]string{"PROBE=" + probe}, env...), tmpInodes()+`sh -c 'echo up > `+r.in+`; read x < `+r.out+"\n"+inner+`'`)
		reached(t, r.b, r.in)
		return r
	}
	// Root's run in a real home (its state, and the ledger of the
	// project's placeholders, in the home), the other's in /tmp.
	h := userHome(t, root)
	a := start(root, h.proj, h.env()...)
	_, projB := parentProject(t, unprivileged)
	b := start(unprivileged, projB)
	release(t, a.b, a.out)
	ra := a.b.wait(t)
	release(t, b.b, b.out)
	rb := b.b.wait(t)
	for _, r := range []result{ra, rb} {
		if r.status != 0 || strings.Contains(r.stdout, "=ok") {
			t.Errorf("a run's commands made config in /tmp's placeholders, the other run having ended: status %d\n%s%s", r.status, r.stdout, r.stderr)
		}
	}
	// Root's next run, in another project, with another home in /tmp.
	mustJail(t, root, workDir(t, root), nil, "/bin/true")
	now := tmpNames(t)
	if n := strings.Count(ra.stdout+rb.stdout, "\nino ") + 1; !strings.HasPrefix(ra.stdout, "ino ") || n != 2*len(protect.ParentNames()) {
		t.Fatalf("the jails listed %d inodes of /tmp's names:\n%s\n%s", n, ra.stdout, rb.stdout)
	}
	for _, out := range []string{ra.stdout, rb.stdout} {
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != "ino" {
				continue
			}
			if _, was := tmpBefore[f[1]]; !was && strconv.FormatUint(now[f[1]], 10) == f[2] {
				t.Errorf("/tmp/%s (inode %s), a placeholder of the runs, is still there after root's next run", f[1], f[2])
			}
		}
	}
}

// TestParentNamesFreeInEnclosingRepository: started in a directory of a
// repository (a monorepo's packages/web, in /tmp), a command commits to
// the repository and writes its root's node_modules and go.work: the
// repository, up to its root, is the project's own; the host's git
// reads the commit back.
func TestParentNamesFreeInEnclosingRepository(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			repo := hostRepo(t, u)
			web := filepath.Join(repo, "packages", "web")
			if err := os.MkdirAll(web, 0o755); err != nil {
				t.Fatal(err)
			}
			if u.uid >= 0 {
				os.Chown(filepath.Dir(web), u.uid, u.uid)
				os.Chown(web, u.uid, u.uid)
			}
			mustJail(t, u, web, []string{"HOME=" + workDir(t, u)}, `echo x > w && git add w &&
git -c user.name=jail -c user.email=jail@example.invalid commit -qm in-the-jail &&
mkdir ../../node_modules && : > ../../go.work`)
			cmd := exec.Command("git", "-c", "safe.directory=*", "log", "-1", "--format=%s")
			cmd.Dir, cmd.Env = repo, []string{"PATH=/usr/bin:/bin", "HOME=" + repo, "GIT_CONFIG_NOSYSTEM=1"}
			if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "in-the-jail" {
				t.Errorf("the host's git log in the repository: %q, %v; want the jail's commit", out, err)
			}
			for _, n := range []string{"node_modules", "go.work"} {
				if _, err := os.Lstat(filepath.Join(repo, n)); err != nil {
					t.Errorf("%s, made at the repository's root, is not on the host: %v", n, err)
				}
			}
		})
	}
}

// TestParentPlaceholderGitInAnotherRunsProject: a run started in
// work/proj makes the placeholder work/.git; a run of the same user
// started in work meanwhile, whose project work is, finds it empty and
// takes it for no repository (it makes nothing in it: the empty .git of
// a run is no gitdir to protect). After both runs the host lists work as
// before.
func TestParentPlaceholderGitInAnotherRunsProject(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work, proj := parentProject(t, u)
			before := listing(t, work)
			in, out := gate(t, "in"), gate(t, "out")
			a := startBg(t, u, proj, nil, `echo up > `+in+`; read x < `+out)
			reached(t, a, in)
			if fi, err := os.Lstat(filepath.Join(work, ".git")); err != nil || !fi.IsDir() {
				t.Fatalf("no placeholder .git above the start directory: %v", err)
			}
			r := runWsh(t, u, work, append([]string{"HOME=" + workDir(t, u)}, jailEnv...), `ls -A .git; git status 2>&1 | head -1`)
			release(t, a, out)
			if ra := a.wait(t); ra.status != 0 {
				t.Fatalf("status %d: %s", ra.status, ra.stderr)
			}
			if r.status != 0 || !strings.HasPrefix(r.stdout, "fatal: not a git repository") {
				t.Errorf("in the other run, .git holds, and git says: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			sameListing(t, work, before, "two runs, one above the other", r)
		})
	}
}

// TestLowerRungQuietOnOtherRunsPlaceholders: a run on the landlock rung,
// which makes no placeholder, does not take those that a full rung's run
// makes in the same TMPDIR, and holds, while its command runs for what the
// command made, nor their removal for a change: it says nothing of them
// (empty, they hold nothing for the host to run). The config its own
// command writes there afterwards it still says.
func TestLowerRungQuietOnOtherRunsPlaceholders(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			tmp := filepath.Join(workDir(t, u), "tmp")
			_, projA := parentProject(t, u)
			projB := filepath.Join(workDir(t, u), "b")
			for _, d := range []string{tmp, projB} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					os.Chown(d, u.uid, u.uid)
				}
			}
			up, goOn, up2, go2, fup, fgo := gate(t, "up"), gate(t, "go"), gate(t, "up2"), gate(t, "go2"), gate(t, "fup"), gate(t, "fgo")
			lower := startBgVia(t, u, projA, []string{"WSH_REQUIRE_SANDBOX=landlock", "TMPDIR=" + tmp, "UP=" + up, "GO=" + goOn, "UP2=" + up2, "GO2=" + go2},
				`sh -c 'echo up > "$UP"; read x < "$GO"'
sh -c 'echo up > "$UP2"; read x < "$GO2"'
sh -c 'mkdir -p "$TMPDIR/.cargo" && echo x > "$TMPDIR/.cargo/config.toml"'`, hostileBin(t), "1", "--")
			reached(t, lower, up)
			full := startBg(t, u, projB, []string{"TMPDIR=" + tmp, "UP=" + fup, "GO=" + fgo}, `sh -c 'echo up > "$UP"; read x < "$GO"'`)
			reached(t, full, fup)
			if _, err := os.Lstat(filepath.Join(tmp, ".git")); err != nil {
				t.Fatalf("the full rung's run made no placeholder in its TMPDIR: %v", err)
			}
			release(t, lower, goOn)
			reached(t, lower, up2) // the first command ended and was checked
			release(t, full, fgo)
			if r := full.wait(t); r.status != 0 {
				t.Fatalf("the full rung's run: status %d\n%s", r.status, r.stderr)
			}
			release(t, lower, go2)
			r := lower.wait(t)
			if r.status != 0 {
				t.Fatalf("the landlock rung's run: status %d\n%s", r.status, r.stderr)
			}
			var said []string
			for _, l := range strings.Split(r.stderr, "\n") {
				if strings.HasPrefix(l, "wsh: a command made ") || strings.HasPrefix(l, "wsh: a command changed ") {
					said = append(said, strings.Fields(l)[4])
				}
			}
			if want := filepath.Join(tmp, ".cargo") + ","; len(said) != 1 || said[0] != want {
				t.Errorf("said made or changed: %q, want only %q\nstderr:\n%s", said, want, r.stderr)
			}
		})
	}
}

// TestParentNamesWhenStartedInTmpdir: a run started in its TMPDIR itself
// (a directory every run shares, as /tmp) protects the names there as in
// any TMPDIR: a command cannot make .cargo/config.toml or conftest.py in
// it (the fifth review: started there, nothing was protected), and
// nothing of the placeholders is left after the run.
func TestParentNamesWhenStartedInTmpdir(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			tmp := filepath.Join(workDir(t, u), "tmp")
			mkdirOwned(t, u, tmp)
			before := listing(t, tmp)
			r := runWsh(t, u, tmp, append([]string{"TMPDIR=" + tmp, "HOME=" + workDir(t, u)}, jailEnv...),
				`sh -c 'mkdir -p .cargo && echo "[alias]" > .cargo/config.toml && echo made-cargo; echo x > conftest.py && echo made-conftest; true'`)
			if r.status != 0 || strings.Contains(r.stdout, "made") {
				t.Errorf("started in TMPDIR, a command made a parent name there: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			sameListing(t, tmp, before, "started in TMPDIR", r)
		})
	}
}

// TestParentNamesInAHomeThatIsTmpdir: with HOME its TMPDIR (as HOME=/tmp
// for a service account), started in a project below, a command cannot
// make the parent names in the home (the review of the whole: they were
// left out of the home), and nothing is left after the run.
func TestParentNamesInAHomeThatIsTmpdir(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			tmp := filepath.Join(workDir(t, u), "tmp")
			proj := filepath.Join(tmp, "proj")
			mkdirOwned(t, u, tmp)
			mkdirOwned(t, u, proj)
			before := listing(t, tmp)
			r := runWsh(t, u, proj, append([]string{"TMPDIR=" + tmp, "HOME=" + tmp}, jailEnv...),
				`sh -c 'echo x > ../conftest.py && echo made-conftest; mkdir -p ../node_modules/x && echo made-node; true'`)
			if r.status != 0 || strings.Contains(r.stdout, "made") {
				t.Errorf("with HOME its TMPDIR, a command made a parent name there: status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
			sameListing(t, tmp, before, "HOME=TMPDIR", r)
		})
	}
}
