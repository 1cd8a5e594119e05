package jail

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// hide puts an empty, read-only, mode-000 tmpfs over each hidden directory
// and an empty mode-000 file of it over each hidden file, so nothing in the
// jail can read them (EACCES). A hidden path that does not exist is left:
// the root is read-only, so it can appear only under a writable path.
func hide(st *setupState) error {
	var dirs, files []string
	for _, p := range st.spec.Hidden {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return err
		case fi.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	if len(dirs)+len(files) == 0 {
		return nil
	}
	return coverAll(dirs, files)
}

// coverAll makes one tmpfs holding one empty file, clones it (or the file)
// once per path, makes it unreadable, and moves the clones into place.
func coverAll(dirs, files []string) error {
	mfd, err := emptyTmpfs()
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	var clones []int
	for range dirs {
		fd, err := unix.OpenTree(mfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if err != nil {
			return os.NewSyscallError("open_tree(hide)", err)
		}
		clones = append(clones, fd)
	}
	for range files {
		fd, err := unix.OpenTree(mfd, "f", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return os.NewSyscallError("open_tree(hide)", err)
		}
		clones = append(clones, fd)
	}
	// The root's mode is the tmpfs's own inode, shared by every clone.
	if err := unix.Chmod("/proc/self/fd/"+strconv.Itoa(mfd), 0); err != nil {
		return os.NewSyscallError("chmod(hide)", err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	for i, p := range append(dirs, files...) {
		if err := unix.MountSetattr(clones[i], "", unix.AT_EMPTY_PATH, attr); err != nil {
			return &os.PathError{Op: "mount_setattr", Path: p, Err: err}
		}
		if err := moveMount(clones[i], p); err != nil {
			return err
		}
	}
	return nil
}

// emptyTmpfs makes a detached tmpfs with one empty mode-000 file "f".
func emptyTmpfs() (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsopen(tmpfs)", err)
	}
	defer unix.Close(fsfd)
	for k, v := range map[string]string{"mode": "0700", "size": "4k", "nr_inodes": "4"} {
		if err := unix.FsconfigSetString(fsfd, k, v); err != nil {
			return -1, os.NewSyscallError("fsconfig("+k+")", err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, os.NewSyscallError("fsconfig(create)", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("fsmount", err)
	}
	fd, err := unix.Openat(mfd, "f", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(mfd)
		return -1, os.NewSyscallError("openat(hide)", err)
	}
	unix.Close(fd)
	return mfd, nil
}
