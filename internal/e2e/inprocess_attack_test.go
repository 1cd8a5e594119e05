//go:build linux && cgo

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attackTree is a working directory with a hidden directory and a file
// outside every writable path, for the in-process attacks below.
type attackTree struct {
	work, secret, outside string
	env                   []string
}

func newAttackTree(t *testing.T, u user) attackTree {
	t.Helper()
	work := workDir(t, u)
	outside, err := os.MkdirTemp("/var/tmp", "wsh-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	os.Chmod(outside, 0o777)
	mustDo(t, os.WriteFile(filepath.Join(outside, "f"), []byte("intact\n"), 0o666))
	os.Chmod(filepath.Join(outside, "f"), 0o666) // only the policy can refuse
	// The hidden directory's parent h is not hidden, so a command can
	// move it.
	secret := filepath.Join(work, "h", "secret")
	for _, d := range []string{filepath.Join(work, "h"), secret, filepath.Join(work, "pub")} {
		mustDo(t, os.Mkdir(d, 0o755))
		mustDo(t, os.WriteFile(filepath.Join(d, "file"), []byte("SECRET\n"), 0o644))
		if u.uid >= 0 {
			mustChown(t, d, u.uid)
			mustChown(t, filepath.Join(d, "file"), u.uid)
		}
		if d == filepath.Join(work, "h") {
			os.Remove(filepath.Join(d, "file"))
		}
	}
	mustDo(t, os.WriteFile(filepath.Join(secret, "only-in-secret"), nil, 0o644))
	return attackTree{work, secret, outside, []string{"WSH_HIDE=" + secret, "WSH_REQUIRE_SANDBOX=1"}}
}

func (a attackTree) check(t *testing.T, r result) {
	t.Helper()
	if b, _ := os.ReadFile(filepath.Join(a.outside, "f")); string(b) != "intact\n" {
		t.Errorf("the file outside was written: %q\n%s%s", b, r.stdout, r.stderr)
	}
	// (A case that moves the hidden directory away checks its content only
	// through the shell's output.)
	if b, err := os.ReadFile(filepath.Join(a.secret, "file")); err == nil && string(b) != "SECRET\n" {
		t.Errorf("the hidden file was changed: %q\nstdout: %s\nstderr: %s", b, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "only-in-secret") {
		t.Errorf("hidden contents leaked:\n%s", r.stdout)
	}
}

// TestInProcessAttacks replays the review's attacks on the in-process
// policy; each broke it before the fixes.
func TestInProcessAttacks(t *testing.T) {
	cases := []struct{ name, script string }{
		// mvdan.cc/sh opens $TMPDIR/sh-interp-* itself, following symlinks
		// (wsh is started with TMPDIR=WORK).
		{"interpreter FIFO name", `ln -s OUT/f sh-interp-w; ln -s SECRET/file sh-interp-r
echo PWNED >> $PWD/sh-interp-w; read -r x < $PWD/sh-interp-r; echo "$x"`},
		{"FIFO name via a script without #!", `printf 'echo PWNED >> $TMPDIR/sh-interp-w\n' > noshebang; chmod +x noshebang
ln -s OUT/f sh-interp-w; TMPDIR=$PWD ./noshebang`},
		// The hidden directory's parent moved to where its path is longer
		// than PATH_MAX: it cannot be resolved by path, so fail closed.
		{"path beyond PATH_MAX", `python3 -c '
import os
w, n = os.getcwd(), "d" * 200
os.mkdir("deep"); os.chdir("deep")
for i in range(24):
    os.mkdir(n); os.chdir(n)
    if i == 11: mid = os.open(".", os.O_PATH)
os.rename(w + "/h", "h")
os.symlink("deep/" + "/".join([n] * 12), w + "/s1")
os.symlink("/".join([n] * 12), "s2", dir_fd=mid)
os.symlink("s1/s2/h/secret/file", w + "/k")
os.symlink("s1/s2/h/secret", w + "/k2")
print("moved")
'; read -r x < k; echo "$x"; echo k2/*`},
		// ".." after a symlink, in what cleans to a device's name.
		{"dot-dot after a symlink in a device name", `mkdir -p x/a/b/dev x/a/b/c/d; ln -s OUT/f x/a/b/dev/stdout
ln -s SECRET/file x/a/b/dev/null; l=/tmp/wsh-e2e-l-$$; ln -s $PWD/x/a/b/c/d $l
echo PWNED > $l/../../dev/stdout; read -r s < $l/../../dev/null; echo "$s"; rm -f $l`},
		// Writing through the shell's own stdin, a file outside.
		{"stdin reopened for writing", `echo PWNED >> /dev/stdin; echo PWNED >> /proc/self/fd/0`},
		// A symlink swapped between a public and the hidden directory.
		{"race: truncate", `python3 -c '
import os, time
end = time.time() + 3
while time.time() < end:
    for t in ("pub", "SECRET"):
        os.symlink(t, "d.new"); os.rename("d.new", "d")
' & for i in $(seq 3000); do : > d/file; done 2>/dev/null; wait`},
		{"race: list and test", `python3 -c '
import os, time
end = time.time() + 3
while time.time() < end:
    for t in ("pub", "SECRET"):
        os.symlink(t, "d.new"); os.rename("d.new", "d")
' & for i in $(seq 1500); do echo d/*; [ -e d/only-in-secret ] && echo only-in-secret; done 2>/dev/null; wait`},
	}
	for _, u := range users {
		for _, c := range cases {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				a := newAttackTree(t, u)
				script := strings.NewReplacer("OUT", a.outside, "SECRET", a.secret, "WORK", a.work).Replace(c.script)
				cmd := wshCmd(t.Context(), u, a.work, append(a.env, "TMPDIR="+a.work), "-c", script)
				in, err := os.Open(filepath.Join(a.outside, "f"))
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				cmd.Stdin = in
				var out, errb strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &errb
				cmd.Run()
				a.check(t, result{stdout: out.String(), stderr: errb.String()})
			})
		}
	}
}

// TestOtherSessionCannotTouchFIFODir: mvdan.cc/sh opens its FIFO names in
// its own directory without the open handler, so no jailed command of any
// session may put a symlink there. Session A tells its directory; a jailed
// command of session B (with another TMPDIR) tries to plant a symlink to a
// file outside; A then writes to that name.
func TestOtherSessionCannotTouchFIFODir(t *testing.T) {
	u := root
	a := newAttackTree(t, u)
	cmd := wshCmd(t.Context(), u, a.work, nil, "-c", `d=$(echo <(true)); echo "${d%/*}" > fifodir
while ! test -e go; do :; done; echo PWNED >> "${d%/*}/sh-interp-x"; echo st=$?`)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	for i := 0; i < 200 && dir == ""; i++ {
		b, _ := os.ReadFile(filepath.Join(a.work, "fifodir"))
		dir = strings.TrimSpace(string(b))
		time.Sleep(10 * time.Millisecond)
	}
	b := workDir(t, u)
	r := runWsh(t, u, b, []string{"TMPDIR=" + b}, "ln -s "+a.outside+"/f "+dir+"/sh-interp-x; echo lnst=$?")
	mustDo(t, os.WriteFile(filepath.Join(a.work, "go"), nil, 0o644))
	cmd.Wait()
	a.check(t, result{stdout: out.String()})
	if strings.Contains(r.stdout, "lnst=0") {
		t.Errorf("session B planted a symlink in session A's FIFO directory %s: %s", dir, r.stdout)
	}
}

// TestMagicLinkWorkingDirectory: a working directory that goes through a
// magic link (/proc/self/cwd, /proc/thread-self/cwd) does not lead a jail
// into the init's view from before its mounts, where a hidden path has no
// cover.
func TestMagicLinkWorkingDirectory(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			if err := os.Mkdir(filepath.Join(dir, "secret"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeOwned(t, u, filepath.Join(dir, "secret", "key"), "SECRET-KEY\n")
			env := append([]string{"WSH_HIDE=" + filepath.Join(dir, "secret")}, jailEnv...)
			for _, link := range []string{"/proc/self/cwd", "/proc/thread-self/cwd"} {
				r := runWsh(t, u, dir, env, "cd "+link+" && /bin/cat secret/key; /bin/cat "+link+"/secret/key; "+
					"read x < "+link+"/secret/key; echo \"in process: $x\"; cd "+link+" && read y < secret/key; echo \"in process: $y\"")
				if strings.Contains(r.stdout, "SECRET") {
					t.Errorf("cd %s: the hidden file was read:\n%s%s", link, r.stdout, r.stderr)
				}
				// The directory itself is the start directory, and a
				// command runs in it.
				if got := mustJail(t, u, dir, nil, "cd "+link+" && /bin/pwd"); got != dir+"\n" {
					t.Errorf("cd %s && pwd: %q, want %s", link, got, dir)
				}
			}
		})
	}
}

// TestLateHiddenPath: a hidden path that does not exist when wsh starts,
// and that a command or the host makes later, is covered in every jail
// made after it appeared, and refused in process.
func TestLateHiddenPath(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			env := append([]string{"WSH_HIDE=" + filepath.Join(dir, "late") + ":" + filepath.Join(dir, "fromhost")}, jailEnv...)
			// The host makes fromhost/ while wsh sleeps; a command makes
			// late/.
			s := startWsh(t, u, dir, env, "echo started; /bin/sleep 1; mkdir late && echo SECRET-A > late/x; "+
				"/bin/cat late/x fromhost/y; cat < late/x; cat < fromhost/y; echo done")
			s.waitLine(t, "started")
			if err := os.Mkdir(filepath.Join(dir, "fromhost"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeOwned(t, u, filepath.Join(dir, "fromhost", "y"), "SECRET-B\n")
			status, out := s.wait(t, 30*time.Second)
			if strings.Contains(out, "SECRET") || !strings.HasSuffix(out, "done") || strings.Count(out, "Permission denied") < 4 {
				t.Errorf("hidden paths made after wsh started: status %d\n%s", status, out)
			}
		})
	}
}

// TestTildeUserObeysHide: ~NAME, which the shell expands in its own
// process from the user database, stays as written when /etc/passwd is
// hidden; otherwise it is the user's home.
func TestTildeUserObeysHide(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			if got := mustJail(t, u, dir, nil, "echo ~root"); got != "/root\n" {
				t.Fatalf("~root, /etc/passwd not hidden: %q", got)
			}
			if got := mustJail(t, u, dir, []string{"WSH_HIDE=/etc/passwd"}, "echo ~root ~nobody/x"); got != "~root ~nobody/x\n" {
				t.Errorf("~root with /etc/passwd hidden: %q, want it as written", got)
			}
		})
	}
}

// TestHiddenParentCannotMove: a hidden file's directory cannot be moved
// away by a command (it is pinned: EBUSY), whether the file existed when
// wsh started or a command made it later, and a hidden path that a
// symlink leads through is hidden where it leads, in the jail and in
// process.
func TestHiddenParentCannotMove(t *testing.T) {
	cases := []struct {
		name, hide, script string
		busy               bool
	}{
		{"existed", "cfg/secret", `mv cfg cfg2; /bin/cat cfg2/secret; read x < cfg2/secret; echo "$x"`, true},
		{"made later", "sub/secret", `mkdir sub; sh -c 'echo LATE-SECRET > sub/secret'; mv sub sub2; /bin/cat sub2/secret; read x < sub2/secret; echo "$x"`, true},
		// The hidden path made a symlink; what writes to it later (the
		// host, here a jailed sh standing in for it) writes its target.
		{"a symlink itself", ".env", `ln -s leak .env; sh -c 'echo ENV-SECRET > .env'; /bin/cat .env leak; read x < leak; echo "$x"; read x < .env; echo "$x"`, false},
		{"through a symlink", "tool/token", `mkdir real; ln -s real tool; sh -c 'echo TOOL-TOKEN > tool/token'; /bin/cat tool/token real/token; read x < real/token; echo "$x"; read x < tool/token; echo "$x"`, false},
	}
	for _, u := range users {
		for _, c := range cases {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				dir := workDir(t, u)
				if err := os.Mkdir(filepath.Join(dir, "cfg"), 0o755); err != nil {
					t.Fatal(err)
				}
				writeOwned(t, u, filepath.Join(dir, "cfg", "secret"), "HOST-SECRET\n")
				if u.uid >= 0 {
					os.Chown(filepath.Join(dir, "cfg"), u.uid, u.uid)
				}
				env := append([]string{"WSH_HIDE=" + filepath.Join(dir, c.hide)}, jailEnv...)
				r := runWsh(t, u, dir, env, c.script)
				if strings.Contains(r.stdout, "SECRET") || strings.Contains(r.stdout, "TOKEN") {
					t.Errorf("the hidden file was read:\n%s%s", r.stdout, r.stderr)
				}
				if c.busy && !strings.Contains(r.stderr, "Device or resource busy") {
					t.Errorf("moving the hidden file's directory was not refused:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestStartInAHiddenDirectory: wsh started in a hidden directory says so
// and exits 2, rather than failing each command at the jail's chdir.
func TestStartInAHiddenDirectory(t *testing.T) {
	u := users[0]
	dir := filepath.Join(workDir(t, u), "secret")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runWsh(t, u, dir, append([]string{"WSH_HIDE=" + dir}, jailEnv...), "ls")
	if r.status != 2 || !strings.Contains(r.stderr, dir+" is hidden") || strings.Contains(r.stderr, "doctor") {
		t.Errorf("started in a hidden directory: status %d\n%s%s", r.status, r.stdout, r.stderr)
	}
}
