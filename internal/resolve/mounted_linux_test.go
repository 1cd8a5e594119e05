package resolve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountedEnv, set, says the test binary runs in a mount namespace of its
// own (TestMountedMagicLink), where it may mount.
const mountedEnv = "WSH_RESOLVE_TEST_MOUNTNS"

// TestMountedMagicLink: a magic link mounted onto a file elsewhere (with
// open_tree and move_mount, in a mount namespace of the test's own) is
// still a magic link: the walk, as openat2, refuses it under
// RESOLVE_NO_MAGICLINKS, rather than follow the text it reads.
func TestMountedMagicLink(t *testing.T) {
	if os.Getenv(mountedEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMountedMagicLink$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), mountedEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestMountedMagicLink") {
			t.Fatalf("in a user and mount namespace of its own (this machine has them): %v\n%s", err, out)
		}
		return
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(root, "dir/file"), nil, 0o644))
	must(os.WriteFile(filepath.Join(root, "m"), nil, 0o644))
	dir, err := unix.Open(filepath.Join(root, "dir"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(err)
	defer unix.Close(dir)
	// /proc/self/fd/DIR is a magic link to dir; mounted on m, m is it.
	tree, err := unix.OpenTree(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(dir), unix.OPEN_TREE_CLONE|unix.AT_SYMLINK_NOFOLLOW|unix.OPEN_TREE_CLOEXEC)
	must(err)
	defer unix.Close(tree)
	must(unix.MoveMount(tree, "", unix.AT_FDCWD, filepath.Join(root, "m"), unix.MOVE_MOUNT_F_EMPTY_PATH))
	defer func() { // before dir is closed, which the link leads to
		if err := unix.Unmount(filepath.Join(root, "m"), unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
			t.Error(err)
		}
	}()
	for _, c := range []walkCase{
		{"m", openPath, noMagic, "too many levels of symbolic links", ""},
		{"m/file", openRead, noMagic, "too many levels of symbolic links", ""},
		{"ROOT/m/file", openRead, noMagic, "too many levels of symbolic links", ""},
	} {
		for name, open := range map[string]func(int, string, *unix.OpenHow) (int, error){"openat2": openat2, "the walk": walk} {
			dfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			must(err)
			got := "ok"
			fd, err := open(dfd, strings.ReplaceAll(c.path, "ROOT", root), &unix.OpenHow{Flags: c.flags, Resolve: c.resolve})
			if err != nil {
				got = err.Error()
			} else {
				unix.Close(fd)
			}
			unix.Close(dfd)
			if got != c.want {
				t.Errorf("%s of %s: %s, want %s", name, c.path, got, c.want)
			}
		}
	}
}
