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

// The ground does not move (issue 38, items 1 and 3): a command cannot
// rename a directory above a writable path, or above a hidden one, while
// its jail lives. Moved, such a directory takes the jail's mounts with it
// (the read-only protected paths, the covers of the hidden ones), and the
// command can make the old path again with files of its own.

// groundCase is one rename attack: the layout under a fresh base, where
// wsh starts, its settings, the command's script (BASE stands for the
// base), and what the host must show after.
type groundCase struct {
	name string
	// dirs are made under base, owned by the user; files too, with
	// their contents.
	dirs  []string
	files map[string]string
	git   string // a directory under base made a repository, or ""
	start string // where wsh starts, under base
	env   func(base string) []string
	// attack renames from/to in BASE, then plants its own files.
	from, to string
	plant    []string // files the command writes, under base, after the rename
}

var groundCases = []groundCase{
	{
		// The project in /tmp/X/work/proj, /tmp writable: work lies
		// between the writable /tmp and the start directory.
		name:  "start directory's parent",
		dirs:  []string{"work", "work/proj", "work/proj/.vscode"},
		files: map[string]string{"work/proj/.vscode/tasks.json": "HOST-TASKS\n", "work/proj/.mcp.json": "HOST-MCP\n"},
		start: "work/proj",
		from:  "work", to: "moved",
		plant: []string{"work/proj/.vscode/tasks.json", "work/proj/.mcp.json"},
	},
	{
		// A monorepo (a repository: its own directories above were
		// pinned already) made writable, started in packages/web:
		// packages lies between the writable root and the start
		// directory.
		name:  "monorepo's packages",
		dirs:  []string{"mono", "mono/packages", "mono/packages/web", "mono/packages/web/.vscode"},
		files: map[string]string{"mono/packages/web/.vscode/tasks.json": "HOST-TASKS\n", "mono/packages/web/.mcp.json": "HOST-MCP\n"},
		git:   "mono",
		start: "mono/packages/web",
		env:   func(base string) []string { return []string{"WSH_WRITABLE=" + filepath.Join(base, "mono")} },
		from:  "mono/packages", to: "mono/old",
		plant: []string{"mono/packages/web/.vscode/tasks.json", "mono/packages/web/.mcp.json"},
	},
	{
		// $TMPDIR's bind, in the writable /tmp, moved with its parent.
		name:  "TMPDIR's parent",
		dirs:  []string{"proj", "t", "t/tmp"},
		start: "proj",
		env:   func(base string) []string { return []string{"TMPDIR=" + filepath.Join(base, "t", "tmp")} },
		from:  "t", to: "moved",
	},
}

// TestGroundDoesNotMove: the rename is refused (EBUSY, as mv reads it
// back from rename(2)), and the host's project path shows its own
// .vscode/tasks.json and .mcp.json, not the command's. The control: the
// same script, run unconfined on the same layout in a throwaway user and
// mount namespace, moves the directory and plants the files, which the
// same checks see.
func TestGroundDoesNotMove(t *testing.T) {
	for _, u := range users {
		for _, c := range groundCases {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				base := groundLayout(t, u, c)
				// The home elsewhere: the harness's HOME is the start
				// directory, which would make it the copy-on-write home.
				env := []string{"HOME=" + workDir(t, u)}
				if c.env != nil {
					env = append(env, c.env(base)...)
				}
				r := runWsh(t, u, filepath.Join(base, c.start), append(append([]string(nil), jailEnv...), env...), "/bin/sh -c "+shQuote(groundScript(base, c)))
				if !strings.Contains(r.stderr, "Device or resource busy") {
					t.Errorf("the rename of %s was not refused with EBUSY: status %d\n%s%s", c.from, r.status, r.stdout, r.stderr)
				}
				if bad := groundMoved(t, base, c); bad != "" {
					t.Errorf("%s\n%s%s", bad, r.stdout, r.stderr)
				}

				ctl := groundLayout(t, u, c)
				out := unconfined(t, u, ctl, "/bin/sh", "-c", groundScript(ctl, c))
				if bad := groundMoved(t, ctl, c); bad == "" {
					t.Fatalf("control: the same rename, unconfined, left the host as it was, so this test could not see it:\n%s", out)
				}
			})
		}
	}
}

// TestHiddenPathCannotBeMovedAway: a hidden file's directory cannot be
// moved away with a directory above it that lies above a writable path's
// bind (the start directory's parent, a WSH_WRITABLE path's), so the next
// run, with the same setting, cannot read it where it went. In the full
// jail the directory is pinned (EBUSY); on the landlock rung the
// directories above a hidden path are granted entry by entry, so no
// entry of them can be removed (EACCES). The control: unconfined, in a
// throwaway namespace, the same rename succeeds and the file is there to
// read where it went.
func TestHiddenPathCannotBeMovedAway(t *testing.T) {
	cases := []struct {
		name, start, hide, from, to string
		env                         func(base string) []string
	}{
		{name: "start directory's parent", start: "work/proj", hide: "work/proj/.env", from: "work", to: "moved"},
		{name: "writable path's parent", start: "", hide: "a/w/.env", from: "a", to: "moved",
			env: func(base string) []string { return []string{"WSH_WRITABLE=" + filepath.Join(base, "a", "w")} }},
	}
	for _, u := range users {
		for _, rg := range groundRungs {
			for _, c := range cases {
				t.Run(u.name+"/"+rg.name+"/"+c.name, func(t *testing.T) {
					gc := groundCase{dirs: []string{filepath.Dir(filepath.Dir(c.hide)), filepath.Dir(c.hide)},
						files: map[string]string{c.hide: "HOST-SECRET\n"}, from: c.from, to: c.to}
					base := groundLayout(t, u, gc)
					same := append(append([]string(nil), rg.env...), "WSH_HIDE="+filepath.Join(base, c.hide), "HOME="+workDir(t, u))
					env := same
					if c.env != nil {
						env = append(append([]string(nil), same...), c.env(base)...)
					}
					r := rg.run(t, u, filepath.Join(base, c.start), env, "/bin/sh -c "+shQuote(groundScript(base, gc)))
					if !strings.Contains(r.stderr, rg.refused) {
						t.Errorf("the rename of %s was not refused (%s): status %d\n%s%s", c.from, rg.refused, r.status, r.stdout, r.stderr)
					}
					went := filepath.Join(base, c.to, strings.TrimPrefix(c.hide, c.from+"/"))
					// The next run: the same WSH_HIDE, no other setting (a
					// WSH_WRITABLE moved away would stop it before any command).
					next := rg.run(t, u, base, same, "/bin/cat "+shQuote(went)+"; read x < "+shQuote(went)+"; echo \"$x\"; echo done")
					if strings.Contains(next.stdout, "SECRET") || !strings.Contains(next.stdout, "done") {
						t.Errorf("the next run, with the same WSH_HIDE, read the hidden file where it went (%s):\n%s", went, next.stdout)
					}

					ctl := groundLayout(t, u, gc)
					out := unconfined(t, u, ctl, "/bin/sh", "-c", groundScript(ctl, gc))
					wentCtl := filepath.Join(ctl, c.to, strings.TrimPrefix(c.hide, c.from+"/"))
					if b, err := os.ReadFile(wentCtl); err != nil || string(b) != "HOST-SECRET\n" {
						t.Fatalf("control: the same rename, unconfined, did not move the hidden file to %s (%v), so this test could not see it:\n%s", wentCtl, err, out)
					}
				})
			}
		}
	}
}

// A groundRung is a rung the rename attacks run on: how wsh is run
// there, and the refusal of the rename that the rung gives.
type groundRung struct {
	name, refused string
	env           []string
	run           func(t *testing.T, u user, dir string, env []string, script string) result
}

var groundRungs = []groundRung{
	{"full", "Device or resource busy", jailEnv, runWsh},
	{"landlock", "Permission denied", []string{"WSH_REQUIRE_SANDBOX=landlock"},
		func(t *testing.T, u user, dir string, env []string, script string) result {
			t.Helper()
			return runHostile(t, u, dir, env, cloneEPERM.arg, script)
		}},
}

// TestGroundOnLandlockIsSaid: on the landlock rung (no mounts, so no
// pins) a directory above the start directory, in the writable /tmp, can
// be renamed, and the project's path made again; the protected paths are
// not read-only on that rung anyway, and wsh says after the command that
// the project's .vscode and .mcp.json changed, as for any write to them.
func TestGroundOnLandlockIsSaid(t *testing.T) {
	c := groundCases[0]
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			base := groundLayout(t, u, c)
			env := []string{"WSH_REQUIRE_SANDBOX=landlock", "HOME=" + workDir(t, u)}
			r := groundRungs[1].run(t, u, filepath.Join(base, c.start), env, "/bin/sh -c "+shQuote(groundScript(base, c)))
			for _, f := range c.plant {
				name := filepath.Join(base, strings.TrimSuffix(f, "/tasks.json"))
				if !strings.Contains(r.stderr, "a command changed "+name+", a protected path") {
					t.Errorf("wsh did not say that %s changed (the host shows: %s):\n%s%s", name, groundMoved(t, base, c), r.stdout, r.stderr)
				}
			}
		})
	}
}

// groundLayout makes c's directories and files under a fresh base owned
// by u, and its repository.
func groundLayout(t *testing.T, u user, c groundCase) string {
	t.Helper()
	base := workDir(t, u)
	for _, d := range c.dirs {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for f, content := range c.files {
		writeOwned(t, u, filepath.Join(base, f), content)
	}
	if c.git != "" {
		if out, err := exec.Command("git", "init", "-q", filepath.Join(base, c.git)).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	if u.uid >= 0 {
		err := filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, u.uid, u.uid)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// groundScript is the attack: rename c.from to c.to in base, say what
// the rename gave, then make c.plant's files again with the command's
// contents.
func groundScript(base string, c groundCase) string {
	var b strings.Builder
	b.WriteString("cd " + shQuote(base) + " && mv " + shQuote(c.from) + " " + shQuote(c.to) + "; echo mv=$?")
	for _, f := range c.plant {
		b.WriteString("; mkdir -p " + shQuote(filepath.Dir(f)) + " && echo COMMAND > " + shQuote(f))
	}
	b.WriteString("; true")
	return b.String()
}

// groundMoved says what of the attack the host shows under base ("" when
// nothing): the renamed directory, and each planted file that holds the
// command's contents.
func groundMoved(t *testing.T, base string, c groundCase) string {
	t.Helper()
	var said []string
	if _, err := os.Lstat(filepath.Join(base, c.to)); err == nil {
		said = append(said, "the host shows "+c.from+" moved to "+c.to)
	}
	for _, f := range c.plant {
		b, err := os.ReadFile(filepath.Join(base, f))
		switch {
		case err != nil:
			said = append(said, "the host's "+f+" is gone: "+err.Error())
		case !strings.HasPrefix(string(b), "HOST-"):
			said = append(said, "the host's "+f+" holds the command's "+strings.TrimSpace(string(b)))
		}
	}
	return strings.Join(said, "; ")
}

// unconfined runs argv as u, without wsh, in a throwaway user and mount
// namespace (unshare -Urmn): the control of an attack, which changes only
// the throwaway layout on the host.
func unconfined(t *testing.T, u user, dir string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-Urmn", "--"}, argv...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if u.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("control: unshare -Urmn %v as %s: %v\n%s", argv, u.name, err, out)
	}
	return string(out)
}
