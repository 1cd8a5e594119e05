package jail

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hide puts an empty, read-only, mode-000 tmpfs over each hidden directory
// and an empty mode-000 file of it over each hidden file, so nothing in the
// jail can read them (EACCES). A hidden path that does not exist is left:
// the root is read-only, so it can appear only under a writable path.
//
// Beneath the copy-on-write home, a hidden path is covered where the home
// shows it now (openPlace), whatever a command of this user made there; if
// the home shows nothing there (removed, or a symlink put in its place),
// the host's file is not in the jail's view, and there is nothing to
// cover.
func hide(st *setupState) error {
	var dirs, files []PathID
	for _, id := range st.spec.Hidden {
		if (id.Dev == 0 && id.Ino == 0) || beneathOther(id, st.spec.Hidden) {
			continue // did not exist when wsh started, or covered already
		}
		fd, err := st.openPlace(id, false, false)
		if st.inHome(id.Path) && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) {
			continue
		}
		if err != nil {
			return err // moved away since wsh started: fail, never uncover
		}
		var fst unix.Stat_t
		err = unix.Fstat(fd, &fst)
		unix.Close(fd)
		switch {
		case err != nil:
			return &os.PathError{Op: "fstat", Path: id.Path, Err: err}
		case fst.Mode&unix.S_IFMT == unix.S_IFDIR:
			dirs = append(dirs, id)
		default:
			files = append(files, id)
		}
	}
	if len(dirs)+len(files) == 0 {
		return nil
	}
	return st.coverAll(dirs, files)
}

// beneathOther reports whether id lies beneath another of the paths.
func beneathOther(id PathID, all []PathID) bool {
	for _, o := range all {
		if strings.HasPrefix(id.Path, o.Path+"/") && (o.Dev != 0 || o.Ino != 0) {
			return true
		}
	}
	return false
}

// coverAll makes one tmpfs holding one empty file, clones it (or the file)
// once per path, makes it unreadable, and moves the clones into place.
func (st *setupState) coverAll(dirs, files []PathID) error {
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
	for i, id := range append(dirs, files...) {
		if err := unix.MountSetattr(clones[i], "", unix.AT_EMPTY_PATH, attr); err != nil {
			return &os.PathError{Op: "mount_setattr", Path: id.Path, Err: err}
		}
		if err := st.placeMount(clones[i], id); err != nil {
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
