package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	noSymlinks   = unix.RESOLVE_NO_SYMLINKS
	noMagic      = unix.RESOLVE_NO_MAGICLINKS
	beneath      = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS
	openRead     = unix.O_RDONLY | unix.O_CLOEXEC
	openPath     = unix.O_PATH | unix.O_CLOEXEC
	openCreate   = unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC
	openCreateEx = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC
)

// A walkCase opens path (ROOT is the tree's own path) in a fresh tree.
type walkCase struct {
	path    string
	flags   uint64
	resolve uint64
	want    string // what both give: "ok PATH TYPE" or the errno's text
	walk    string // what the walk gives where it is stricter, if not want
}

var walkCases = []walkCase{
	{"file", openRead, noSymlinks, "ok file reg", ""},
	{"dir/file", openRead, noSymlinks, "ok dir/file reg", ""},
	{"ROOT/dir/", openPath | unix.O_DIRECTORY, noSymlinks | noMagic, "ok dir dir", ""},
	{"linkdir/file", openRead, noSymlinks, "too many levels of symbolic links", ""},
	{"linkfile", openRead, noSymlinks, "too many levels of symbolic links", ""},
	{"linkfile", openPath, noSymlinks, "too many levels of symbolic links", ""},
	{"linkdir/", openPath, noSymlinks, "too many levels of symbolic links", ""},
	{"linkfile", openPath | unix.O_NOFOLLOW, noSymlinks, "ok linkfile lnk", ""},
	{"missing/x", openRead, noSymlinks, "no such file or directory", ""},
	{"file/x", openRead, noSymlinks, "not a directory", ""},
	{"file", openRead | unix.O_DIRECTORY, noSymlinks, "not a directory", ""},
	{"../x", openRead, beneath, "invalid cross-device link", ""},
	{"dir/../../x", openRead, beneath, "invalid cross-device link", ""},
	{"ROOT/file", openRead, beneath, "invalid cross-device link", ""},
	{"dir/../file", openRead, beneath, "ok file reg", "invalid cross-device link"},
	{"new", openCreate, beneath, "ok new reg 600", ""},
	{"dir/new", openCreateEx, beneath, "ok dir/new reg 600", ""},
	{"file", openCreateEx, beneath, "file exists", ""},
	{"linkfile", openCreate, beneath, "too many levels of symbolic links", ""},
	{"new/", openCreate, beneath, "is a directory", ""},
	{"linkdir/file", openRead, noMagic, "ok dir/file reg", ""},
	{"linkfile", openRead, noMagic, "ok file reg", ""},
	{"linkdir/", openPath | unix.O_DIRECTORY, noMagic, "ok dir dir", ""},
	{"link2/file", openRead, noMagic, "ok dir/file reg", ""},
	{"abslink/file", openRead, noMagic, "ok dir/file reg", ""},
	{"dir/uplink/file", openRead, noMagic, "ok file reg", ""}, // uplink -> ../
	{"dangling", openRead, noMagic, "no such file or directory", ""},
	{"dangling", openCreate, noMagic, "ok missing reg 600", ""},
	{"loop1", openPath, noMagic, "too many levels of symbolic links", ""},
	{"chain39", openRead, noMagic, "ok file reg", ""}, // 40 symlinks
	{"chain40", openRead, noMagic, "too many levels of symbolic links", ""},
	{"/proc/self/cwd", openPath | unix.O_DIRECTORY, noMagic, "too many levels of symbolic links", ""},
	{"/proc/self/fd/0", openPath, noMagic, "too many levels of symbolic links", ""},
	{"proclink", openPath | unix.O_DIRECTORY, noMagic, "too many levels of symbolic links", ""},
	{"proclink", openPath | unix.O_NOFOLLOW, noMagic, "ok proclink lnk", ""},
	// procfs's root's links are plain ones: followed, by openat2 and
	// by the walk (a hidden path through /proc/self must be covered).
	{"/proc/self/status", openRead, noMagic, "ok /proc/PID/status reg", ""},
	{"/proc/mounts", openRead, noMagic, "ok /proc/PID/mounts reg", ""},
	{"selflink/status", openRead, noMagic, "ok /proc/PID/status reg", ""},
	{"selflink/cwd/file", openRead, noMagic, "too many levels of symbolic links", ""},
	{"/dev/fd/0", openPath, noMagic, "too many levels of symbolic links", ""},
	// From the working directory (AT_FDCWD), which is the tree's root.
	{"CWD linkdir/file", openRead, noMagic, "ok dir/file reg", ""},
	{"CWD proclink", openPath, noMagic, "too many levels of symbolic links", ""},
	{"CWD linkfile", openRead, noSymlinks, "too many levels of symbolic links", ""},
	{"CWD dir/../file", openRead, beneath, "ok file reg", "invalid cross-device link"},
	{"CWD new", openCreate, beneath, "ok new reg 600", ""},
}

// TestWalkAsOpenat2 opens each case with the kernel's openat2 in one tree
// and with the walk in another, the same, and compares what they give.
func TestWalkAsOpenat2(t *testing.T) {
	for _, c := range walkCases {
		t.Run(fmt.Sprintf("%s,%#x,%#x", c.path, c.flags, c.resolve), func(t *testing.T) {
			kernel := openIn(t, c, openat2)
			if kernel != c.want {
				t.Fatalf("openat2 gave %q, the case says %q", kernel, c.want)
			}
			want := c.want
			if c.walk != "" {
				want = c.walk
			}
			if got := openIn(t, c, walk); got != want {
				t.Fatalf("the walk gave %q, openat2 %q (the walk should give %q)", got, kernel, want)
			}
		})
	}
}

// openIn opens c in a fresh tree with open and says what it got.
func openIn(t *testing.T, c walkCase, open func(int, string, *unix.OpenHow) (int, error)) string {
	root := makeTree(t)
	dfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	how := &unix.OpenHow{Flags: c.flags, Resolve: c.resolve}
	if c.flags&unix.O_CREAT != 0 {
		how.Mode = 0o600
	}
	old := unix.Umask(0)
	defer unix.Umask(old)
	path := strings.ReplaceAll(c.path, "ROOT", root)
	if rel, ok := strings.CutPrefix(path, "CWD "); ok {
		// The tests do not run in parallel: the working directory is
		// theirs to change.
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chdir(root); err != nil {
			t.Fatal(err)
		}
		defer os.Chdir(wd)
		path, dfd = rel, unix.AT_FDCWD
	}
	fd, err := open(dfd, path, how)
	if err != nil {
		return err.Error()
	}
	defer unix.Close(fd)
	return describe(t, root, fd)
}

// describe says what fd is: its path (under root, or with the pid as
// PID), its type, and its permissions if it was just made.
func describe(t *testing.T, root string, fd int) string {
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(root, where); err == nil && !strings.HasPrefix(rel, "..") {
		where = rel
	}
	where = strings.Replace(where, "/proc/"+strconv.Itoa(os.Getpid())+"/", "/proc/PID/", 1)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	kind := map[uint32]string{unix.S_IFREG: "reg", unix.S_IFDIR: "dir", unix.S_IFLNK: "lnk"}[st.Mode&unix.S_IFMT]
	if base := filepath.Base(where); base == "new" || base == "missing" {
		kind += fmt.Sprintf(" %o", st.Mode&0o777)
	}
	return "ok " + where + " " + kind
}

// makeTree makes the tree the cases open.
func makeTree(t *testing.T) string {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(root, "file"), []byte("f"), 0o644))
	must(os.WriteFile(filepath.Join(root, "dir/file"), []byte("d"), 0o644))
	links := map[string]string{
		"linkfile": "file", "linkdir": "dir", "link2": "linkdir", "abslink": filepath.Join(root, "dir"),
		"dir/uplink": "../", "dangling": "missing", "loop1": "loop2", "loop2": "loop1",
		"proclink": "/proc/self/cwd", "selflink": "/proc/self", "chain0": "file",
	}
	for i := 1; i <= 40; i++ {
		links["chain"+strconv.Itoa(i)] = "chain" + strconv.Itoa(i-1)
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(root, name)))
	}
	return root
}

// TestStillBeneath: before the last component, the walk checks that the
// directory it reached is still beneath its start, as the kernel does at
// the end of a RESOLVE_BENEATH lookup (a directory moved out of the start
// while the walk was in it would lead the open, or the make, outside).
func TestStillBeneath(t *testing.T) {
	root := makeTree(t)
	out := t.TempDir()
	open := func(p string) int {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	start := open(root)
	for _, c := range []struct {
		cur  string
		want error
	}{{root, nil}, {root + "/dir", nil}, {out, unix.EXDEV}, {"/", unix.EXDEV}} {
		w := &walker{how: &unix.OpenHow{Resolve: beneath}, start: start, cur: open(c.cur)}
		if err := w.stillBeneath(); err != c.want {
			t.Errorf("reached %s from %s: %v, want %v", c.cur, root, err, c.want)
		}
	}
}
