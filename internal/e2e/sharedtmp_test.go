//go:build linux && cgo

package e2e

import (
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// Root's /tmp (issue 38, item 7): the sticky bit does not protect an
// entry from the directory's owner, and the jail maps root to root, so a
// command of root's run could remove or rename another user's file,
// directory or socket in the host's /tmp and put its own in its place.
// The jail pins such entries: EBUSY. An unprivileged run is the sticky
// bit's business (EPERM), as before.

// sharedProbe tries, on each entry given, what a command would do to
// take it over, and prints one line per try: "KIND OP ok|ERRNO".
const sharedProbe = `
import errno, os, socket, sys
def errname(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def replace(p, kind):
    own = p + ".own"
    (os.mkdir if kind in ("dir", "shared") else lambda q: open(q, "w").close())(own)
    return os.rename(own, p)
def connect(p):
    s = socket.socket(socket.AF_UNIX)
    s.connect(p)
    s.close()
for arg in sys.argv[1:]:
    kind, p = arg.split("=", 1)
    if kind == "sock":
        print(kind, "connect", errname(lambda: connect(p)))
    print(kind, "rename", errname(lambda: os.rename(p, p + ".moved")))
    print(kind, "replace", errname(lambda: replace(p, kind)))
    print(kind, "unlink", errname(lambda: (os.rmdir if kind in ("dir", "shared") else os.unlink)(p)))
`

// sharedEntry is one entry the test makes in the host's /tmp for another
// uid, and what it was.
type sharedEntry struct {
	kind, path string
	ino        uint64
	content    string
}

// sharedEntries makes, directly in dir (/tmp), owned by owner: a file, an empty
// directory, a listening socket (mode 0777, so that any uid may connect),
// a symlink, and, when nested, a sticky directory of the runner's (runner) holding,
// nine sticky directories of the runner's further down, a file of owner's. It returns them and the listener, and removes everything at
// the test's end, what the probe made included.
func sharedEntries(t *testing.T, dir string, owner, runner int, nested bool) ([]sharedEntry, *net.UnixListener) {
	t.Helper()
	f, err := os.CreateTemp(dir, "wsh-e2e-shared-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	prefix := f.Name()
	t.Cleanup(func() {
		m, _ := filepath.Glob(prefix + "*")
		for _, p := range m {
			os.RemoveAll(p)
		}
	})
	e := []sharedEntry{{kind: "file", path: prefix + ".file"}, {kind: "dir", path: prefix + ".dir"},
		{kind: "sock", path: prefix + ".sock"}, {kind: "link", path: prefix + ".link"},
		{kind: "shared", path: prefix + ".shared"}, {kind: "inner", path: prefix + ".shared/1/2/3/4/5/6/7/8/9/inner"}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(e[0].path, []byte("the owner's\n"), 0o644))
	must(os.Mkdir(e[1].path, 0o755))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: e[2].path, Net: "unix"})
	must(err)
	l.SetUnlinkOnClose(false)
	t.Cleanup(func() { l.Close() })
	must(os.Chmod(e[2].path, 0o777))
	must(os.Symlink("/etc/hostname", prefix+".link"))
	if nested {
		for d := filepath.Dir(e[5].path); ; d = filepath.Dir(d) {
			must(os.MkdirAll(d, 0o755))
			must(syscall.Chmod(d, 0o1777)) // os.Chmod takes os.ModeSticky, not 0o1000
			must(os.Lchown(d, runner, runner))
			if d == e[4].path {
				break
			}
		}
		must(os.WriteFile(e[5].path, []byte("the owner's, inside\n"), 0o644))
	} else {
		e = e[:4]
	}
	for _, x := range e {
		own := owner
		if x.kind == "shared" {
			own = runner // the runner's own sticky directory, shared
		}
		must(os.Lchown(x.path, own, own))
	}
	for i := range e {
		e[i].ino, e[i].content = sharedState(t, e[i].path)
	}
	return e, l
}

// TestSharedTmpOthersEntriesStay: a command of root's run cannot remove,
// rename or rename over another user's file, directory or socket in the
// host's /tmp, nor those in a sticky directory of root's there, nor that
// directory (EBUSY, read back from the syscalls); the host shows each
// entry as it was (inode, content); the socket still takes a connection
// from the jail. The control: the same probe, unconfined in a throwaway
// namespace where root is root, takes them over. As uid 65534 (root's
// entries in /tmp) the sticky bit refuses it all, in the jail (EPERM) as
// in the control: nothing of wsh's is needed there.
func TestSharedTmpOthersEntriesStay(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			owner, runner, want := nobody, 0, "EBUSY"
			if u.uid >= 0 {
				owner, runner, want = 0, u.uid, "EPERM"
			}
			probe := filepath.Join(workDir(t, u), "probe.py")
			if err := os.WriteFile(probe, []byte(sharedProbe), 0o644); err != nil {
				t.Fatal(err)
			}
			entries, l := sharedEntries(t, "/tmp", owner, runner, u.uid < 0)
			n := acceptCount(l)
			script := "python3 " + probe + " " + strings.Join(sharedArgs(entries), " ")
			out := mustJail(t, u, workDir(t, u), []string{"WSH_UNIX_SOCKETS=allow", "HOME=" + workDir(t, u)}, script)
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Fields(line)
				switch {
				case len(f) != 3:
					t.Errorf("probe line %q", line)
				case f[1] == "connect" && f[2] != "ok":
					t.Errorf("%s: the jail could not connect to another user's socket: %s", f[0], f[2])
				case f[1] != "connect" && f[2] != want:
					t.Errorf("%s %s: %s, want %s", f[0], f[1], f[2], want)
				}
			}
			if c := sharedChanged(t, entries); len(c) > 0 {
				t.Errorf("the host's entries changed: %v\n%s", c, sortedLines(out))
			}
			l.Close()
			if c := <-n; c == 0 {
				t.Errorf("the socket took no connection from the jail:\n%s", out)
			}

			ctl, _ := sharedEntries(t, "/tmp", owner, runner, u.uid < 0)
			cout := unconfined(t, u, "/", append([]string{"python3", probe}, sharedArgs(ctl)...)...)
			c := sharedChanged(t, ctl)
			if u.uid < 0 && len(c) == 0 {
				t.Fatalf("control: unconfined, the probe left another user's entries as they were, so this test could not see it:\n%s", cout)
			}
			if u.uid >= 0 && (len(c) > 0 || strings.Count(cout, " EPERM") != 3*len(ctl)) {
				t.Fatalf("control: unconfined, uid %d: want every try refused by the sticky bit (EPERM), host unchanged; changed %v:\n%s", u.uid, c, cout)
			}
		})
	}
}

// TestSharedTmpdirOthersEntriesStay: a $TMPDIR that is a sticky
// directory of root's, shared with another user, is held as /tmp is: a
// command of root's run cannot take that user's entries over (EBUSY), and
// the host shows them as they were.
func TestSharedTmpdirOthersEntriesStay(t *testing.T) {
	tmp := filepath.Join(workDir(t, root), "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	syscall.Chmod(tmp, 0o1777)
	probe := filepath.Join(workDir(t, root), "probe.py")
	if err := os.WriteFile(probe, []byte(sharedProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	entries, _ := sharedEntries(t, tmp, nobody, 0, true)
	script := "python3 " + probe + " " + strings.Join(sharedArgs(entries[:2]), " ")
	out := mustJail(t, root, workDir(t, root), []string{"TMPDIR=" + tmp, "HOME=" + workDir(t, root)}, script)
	if n := strings.Count(out, " EBUSY\n"); n != 6 {
		t.Errorf("want the 6 tries refused with EBUSY:\n%s", sortedLines(out))
	}
	if c := sharedChanged(t, entries); len(c) > 0 {
		t.Errorf("the host's entries changed: %v\n%s", c, sortedLines(out))
	}
}

// sharedState reads an entry back from the host: its inode, and a
// regular file's content.
func sharedState(t *testing.T, p string) (uint64, string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return 0, "gone: " + err.Error()
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return st.Ino, ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Ino, string(b)
}

// sharedChanged says which entries the host now shows otherwise than
// they were made: another inode, other content, or gone.
func sharedChanged(t *testing.T, entries []sharedEntry) []string {
	t.Helper()
	var changed []string
	for _, e := range entries {
		if ino, content := sharedState(t, e.path); ino != e.ino || content != e.content {
			changed = append(changed, e.kind)
		}
	}
	return changed
}

// sharedArgs are the probe's arguments for the entries.
func sharedArgs(entries []sharedEntry) []string {
	var args []string
	for _, e := range entries {
		args = append(args, e.kind+"="+e.path)
	}
	return args
}

// acceptCount counts the connections l takes until it is closed.
func acceptCount(l *net.UnixListener) chan int {
	n := make(chan int, 1)
	go func() {
		c := 0
		for {
			conn, err := l.Accept()
			if err != nil {
				n <- c
				return
			}
			conn.Close()
			c++
		}
	}()
	return n
}

// sortedLines sorts the probe's lines, for messages that read alike.
func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// TestSharedTmpOwnEntries: a run still makes, renames and removes its own
// entries in the host's /tmp (mktemp, a directory tree, a sticky directory
// of its own, those made before the run too), and, as root (where the
// pins are), a project in /tmp works: `go test` of a small module started
// there (its build directories in /tmp made and removed). Nothing of it is
// left in /tmp.
func TestSharedTmpOwnEntries(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			for name, body := range map[string]string{
				"go.mod":       "module tiny\n\ngo 1.22\n",
				"tiny_test.go": "package tiny\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestTmp(t *testing.T) {\n\td := t.TempDir()\n\tif err := os.WriteFile(d+\"/x\", []byte(\"x\"), 0o600); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					os.Chown(filepath.Join(dir, name), u.uid, u.uid)
				}
			}
			// Made before the run, the runner's own: a file, and a sticky
			// directory holding a file.
			f, err := os.CreateTemp("/tmp", "wsh-e2e-own-*")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			mark := f.Name()
			t.Cleanup(func() {
				m, _ := filepath.Glob(mark + "*")
				for _, p := range m {
					os.RemoveAll(p)
				}
			})
			if err := os.Mkdir(mark+".d", 0o755); err != nil {
				t.Fatal(err)
			}
			syscall.Chmod(mark+".d", 0o1777)
			os.WriteFile(mark+".d/f", []byte("x\n"), 0o644)
			if u.uid >= 0 {
				for _, p := range []string{mark, mark + ".d", mark + ".d/f"} {
					os.Chown(p, u.uid, u.uid)
				}
			}
			script := `set -e
d=$(mktemp -d /tmp/wsh-e2e-own-XXXXXX); mkdir -p "$d/a/b"; echo x > "$d/a/b/f"; rm -rf "$d"
mv ` + mark + ` ` + mark + `.moved; rm ` + mark + `.moved; mv ` + mark + `.d ` + mark + `.e; rm -rf ` + mark + `.e
mkdir ` + mark + `.n; chmod 1777 ` + mark + `.n; echo x > ` + mark + `.n/f; rm -rf ` + mark + `.n
f=$(mktemp); mv "$f" "$f.moved"; rm "$f.moved"
` + goTestFor(u) + `
echo done`
			out := mustJail(t, u, dir, []string{"HOME=" + workDir(t, u)}, script)
			if u.uid < 0 && !strings.Contains(out, "ok  \ttiny") || !strings.HasSuffix(out, "done\n") {
				t.Errorf("the run's own work in /tmp did not go through:\n%s", out)
			}
			if m, _ := filepath.Glob(mark + "*"); len(m) > 0 {
				t.Errorf("the run's own entries are left in /tmp: %v", m)
			}
		})
	}
}

// TestSharedTmpInProcessWrites: the shell's own redirections (run in
// wsh's process, not in the jail) cannot overwrite another user's file in
// the host's /tmp, nor make a file in another user's private directory
// there, where the jail's commands cannot either (EACCES: root's commands
// hold no capability). The host's entries keep their content and
// listing. The control: an external command of the same run is refused
// alike, and the run's own file in /tmp is written in process as before.
func TestSharedTmpInProcessWrites(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			owner := nobody
			if u.uid >= 0 {
				owner = 0
			}
			f, err := os.CreateTemp("/tmp", "wsh-e2e-inproc-*")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			p := f.Name()
			t.Cleanup(func() {
				m, _ := filepath.Glob(p + "*")
				for _, x := range m {
					os.RemoveAll(x)
				}
			})
			os.WriteFile(p+".file", []byte("the owner's\n"), 0o644)
			os.Mkdir(p+".priv", 0o700)
			os.Chown(p+".file", owner, owner)
			os.Chown(p+".priv", owner, owner)
			os.Remove(p) // the run's own, made in process
			script := `echo mine > ` + p + `.file || echo refused-write
echo planted > ` + p + `.priv/new || echo refused-create
/bin/sh -c 'echo mine > ` + p + `.file' 2>/dev/null || echo jail-refused-write
echo own > ` + p + ` && echo own-ok`
			r := runWsh(t, u, workDir(t, u), append(append([]string(nil), jailEnv...), "HOME="+workDir(t, u)), script)
			for _, want := range []string{"refused-write", "refused-create", "jail-refused-write", "own-ok"} {
				if !strings.Contains("\n"+r.stdout, "\n"+want+"\n") {
					t.Errorf("no %s: status %d\n%s%s", want, r.status, r.stdout, r.stderr)
				}
			}
			if strings.Count(r.stderr, "Permission denied") != 2 {
				t.Errorf("want the two in-process refusals to say permission denied (EACCES):\n%s", r.stderr)
			}
			if b, _ := os.ReadFile(p + ".file"); string(b) != "the owner's\n" {
				t.Errorf("the other user's file holds %q", b)
			}
			if _, err := os.Lstat(p + ".priv/new"); err == nil {
				t.Errorf("a file was made in the other user's private directory")
			}
		})
	}
}

// goTestFor is the go test of the tiny module a root run makes in /tmp,
// where the pins are (for uid 65534 there are none, and the sticky bit's
// rules are the kernel's as ever: its compile would only cost time).
func goTestFor(u user) string {
	if u.uid >= 0 {
		return ""
	}
	return "GOTOOLCHAIN=local GOFLAGS= go test -count=1 ./... 2>&1"
}
