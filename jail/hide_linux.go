package jail

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hide puts an empty, read-only, mode-000 tmpfs over each hidden directory
// and an empty mode-000 file of it over each hidden file, so nothing in the
// jail can read them (EACCES). What is covered is what the jail shows at
// the hidden path now (findHidden).
func hide(st *setupState) error {
	var found []PathID
	var isDir []bool
	for _, id := range st.spec.Hidden {
		fst, ok, err := st.findHidden(id)
		if err != nil {
			return err
		}
		if ok {
			id.Dev, id.Ino = fst.Dev, fst.Ino
			found = append(found, id)
			isDir = append(isDir, fst.Mode&unix.S_IFMT == unix.S_IFDIR)
		}
	}
	var dirs, files []PathID
	for i, id := range found {
		switch {
		case beneathOther(id, found):
			// covered already
		case isDir[i]:
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

// findHidden finds what the jail shows at a hidden path, following no
// symlink:
//
//   - in the copy-on-write home: whatever the home shows there, whoever made
//     it (a path of the home has no identity on the host to check);
//   - a path that did not exist when wsh started (no identity): whatever is
//     there now, so that a hidden path that appears later is covered too;
//   - otherwise the file wsh recorded, checked by identity: one replaced
//     since fails the jail (ESTALE), never uncovered.
//
// A path that is not there now is nothing to cover if it never was, or if
// the copy-on-write home is what the jail shows above it (a command of
// this user removed it from the home: the host's file is out of view). A
// path that existed and is gone from a host directory was moved away: the
// jail fails rather than leave it uncovered where it went.
func (st *setupState) findHidden(id PathID) (fst unix.Stat_t, ok bool, err error) {
	noID := id.Dev == 0 && id.Ino == 0
	fd, err := openNoSymlinks(id.Path)
	if err == nil {
		err = unix.Fstat(fd, &fst)
		unix.Close(fd)
		switch {
		case err != nil:
			return fst, false, &os.PathError{Op: "fstat", Path: id.Path, Err: err}
		case st.homeDev != 0 && fst.Dev == st.homeDev, noID, id.Same(&fst):
			return fst, true, nil
		}
		return fst, false, &os.PathError{Op: "verify (it changed since wsh started)", Path: id.Path, Err: unix.ESTALE}
	}
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		return fst, false, err
	}
	if noID || st.shownFromHome(filepath.Dir(id.Path)) {
		return fst, false, nil
	}
	return fst, false, err
}

// shownFromHome reports whether the nearest directory of path (or above it)
// that the jail shows lies in the copy-on-write home.
func (st *setupState) shownFromHome(dir string) bool {
	if st.homeDev == 0 {
		return false
	}
	for ; ; dir = filepath.Dir(dir) {
		if fd, err := openNoSymlinks(dir); err == nil {
			var fst unix.Stat_t
			err = unix.Fstat(fd, &fst)
			unix.Close(fd)
			return err == nil && fst.Dev == st.homeDev
		}
		if dir == "/" {
			return false
		}
	}
}

// beneathOther reports whether id lies beneath another of the paths.
func beneathOther(id PathID, all []PathID) bool {
	for _, o := range all {
		if strings.HasPrefix(id.Path, o.Path+"/") {
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
