package main

import (
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mounts mounts a tmpfs on a fresh directory under $TMPDIR, with mount(2)
// and with the new mount API, and changes it in every way a mount can be
// changed. In a throwaway mount namespace each step succeeds; in the jail
// each must be refused.
func mounts(r results, _ *config) {
	dir, err := os.MkdirTemp("", "wsh-attack-")
	if err != nil {
		fail("%v", err)
	}
	defer os.Remove(dir)
	defer unix.Unmount(dir, unix.MNT_DETACH)
	r["mount"] = errName(unix.Mount("wsh-attack", dir, "tmpfs", 0, ""))
	r["umount2"] = errName(unix.Unmount(dir, 0))
	newMountAPI(r, dir)
	// A root that is not there: the kernel checks the privilege first and
	// then answers ENOENT; nothing is pivoted.
	r["pivot_root"] = errName(unix.PivotRoot("/wsh-attack-absent", "/wsh-attack-absent"))
	r["chroot"] = errName(unix.Chroot("/"))
}

// newMountAPI goes through fsopen, fsconfig, fsmount, move_mount,
// mount_setattr, fspick and open_tree. After a refusal it goes on with a
// descriptor of -1: a filter answers before the kernel looks at it.
func newMountAPI(r results, dir string) {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	r["fsopen"] = errName(err)
	defer closeFD(fs)
	r["fsconfig"] = errName(unix.FsconfigCreate(fs))
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, 0)
	r["fsmount"] = errName(err)
	defer closeFD(mnt)
	r["move_mount"] = errName(unix.MoveMount(mnt, "", unix.AT_FDCWD, dir, unix.MOVE_MOUNT_F_EMPTY_PATH))
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	r["mount_setattr"] = errName(unix.MountSetattr(unix.AT_FDCWD, dir, 0, &attr))
	pick, err := unix.Fspick(unix.AT_FDCWD, dir, unix.FSPICK_CLOEXEC)
	r["fspick"] = errName(err)
	closeFD(pick)
	tree, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	r["open_tree"] = errName(err)
	closeFD(tree)
	// open_tree_attr (Linux 6.15): open_tree that also sets the clone's
	// attributes.
	attr = unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	d := cstr(dir)
	fd, res := call(unix.SYS_OPEN_TREE_ATTR, atFDCWD(), ptr(d), unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC, ptr(&attr), unsafe.Sizeof(attr))
	if res == "ok" {
		unix.Close(int(fd))
	}
	r["open_tree_attr"] = res
	runtime.KeepAlive(d)
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}
