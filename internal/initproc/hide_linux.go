package initproc

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// hide puts an empty, read-only, mode-000 tmpfs over each hidden directory
// and an empty mode-000 file of it over each hidden file, so nothing in the
// jail can read them (EACCES). What is covered is what the jail shows at
// the hidden path now (findHidden). First every directory above a covered
// path that a command could rename, up to /, is bound onto itself
// (pinned, pinAncestors): a mount point cannot be renamed, so no command
// can move a hidden path's parent away, with the hidden file in it, and
// read it where it went (in this jail, or in the next, which covers the
// hidden path where it was, not where it went).
func hide(st *setupState) error {
	var found []string
	var ids []proto.PathID
	var isDir []bool
	for _, id := range st.spec.Hidden {
		where, fst, ok, err := st.findHidden(id)
		if err != nil {
			return err
		}
		if ok && !slices.Contains(found, where) {
			found = append(found, where)
			ids = append(ids, proto.PathID{Path: where, Dev: fst.Dev, Ino: fst.Ino})
			isDir = append(isDir, fst.Mode&unix.S_IFMT == unix.S_IFDIR)
		}
	}
	var dirs, files []proto.PathID
	for i, id := range ids {
		switch {
		case beneathOther(id, ids):
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
	for _, id := range append(append([]proto.PathID(nil), dirs...), files...) {
		if err := st.pinAncestors(id.Path); err != nil {
			return err
		}
	}
	return st.coverAll(dirs, files)
}

// findHidden finds what the jail shows at a hidden path, and where (its
// path, resolved: where the cover goes):
//
//   - in the copy-on-write home: whatever the home shows there, whoever made
//     it (a path of the home has no identity on the host to check);
//   - a path that did not exist when wsh started (no identity): whatever is
//     there now, so that a hidden path that appears later is covered too;
//   - otherwise the file wsh recorded, checked by identity: one replaced
//     since fails the jail (ESTALE), never uncovered.
//
// A path of the first two kinds that leads through a symlink (a command
// made ~/.tool a symlink to ~/realtool) is covered where it leads. A path
// that is not there now is nothing to cover if it never was, or if the
// copy-on-write home is what the jail shows above it (a command of this
// user removed it from the home: the host's file is out of view). A path
// that existed and is gone from a host directory was moved away: the jail
// fails rather than leave it uncovered where it went.
func (st *setupState) findHidden(id proto.PathID) (where string, fst unix.Stat_t, ok bool, err error) {
	noID := id.Dev == 0 && id.Ino == 0
	fd, err := proto.OpenNoSymlinks(id.Path)
	where = id.Path
	if errors.Is(err, unix.ELOOP) && (noID || st.shownFromHome(filepath.Dir(id.Path))) {
		fd, where, err = openFollowing(id.Path)
		noID = true // what it leads to has no identity recorded
		if errors.Is(err, unix.ELOOP) {
			// Through a magic link (/proc/self/root/...) or a loop:
			// where it leads cannot be told, so it cannot be covered
			// there. The jail fails rather than leave it uncovered.
			return where, fst, false, err
		}
	}
	if err == nil {
		err = unix.Fstat(fd, &fst)
		unix.Close(fd)
		switch {
		case err != nil:
			return where, fst, false, &os.PathError{Op: "fstat", Path: id.Path, Err: err}
		case st.homeDev != 0 && fst.Dev == st.homeDev, noID, id.Same(&fst):
			return where, fst, true, nil
		}
		return where, fst, false, &os.PathError{Op: "verify (it changed since wsh started)", Path: id.Path, Err: unix.ESTALE}
	}
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		return where, fst, false, err
	}
	if noID || st.shownFromHome(filepath.Dir(id.Path)) {
		return where, fst, false, nil
	}
	return where, fst, false, err
}

// openFollowing opens path following its symlinks (not magic links) and
// returns it with the path it leads to in the jail's view.
func openFollowing(path string) (int, string, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := resolve.Open(unix.AT_FDCWD, path, how)
	if err != nil {
		return -1, path, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
	where, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !filepath.IsAbs(where) || strings.HasSuffix(where, " (deleted)") {
		unix.Close(fd)
		return -1, path, &os.PathError{Op: "readlink", Path: path, Err: unix.ELOOP}
	}
	return fd, where, nil
}

// shownFromHome reports whether the nearest directory of path (or above it)
// that the jail shows lies in the copy-on-write home.
func (st *setupState) shownFromHome(dir string) bool {
	if st.homeDev == 0 {
		return false
	}
	for ; ; dir = filepath.Dir(dir) {
		if fd, err := proto.OpenNoSymlinks(dir); err == nil {
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

// pinAncestors binds each directory above path onto itself, from the top
// down, where a command could rename it: in a writable mount, and not the
// root of a mount (a directory of a read-only mount cannot be renamed, nor
// can a mount point in the namespace it is mounted in: EBUSY). The walk
// goes on past the roots of mounts, up to /: the start directory bound at
// /tmp/w/proj is a mount point, but /tmp/w above it, in the writable /tmp,
// is not, and moving /tmp/w would move the bind, and all beneath it, with
// it. A directory pinned already ends the walk: what is above it was
// walked when it was pinned.
func (st *setupState) pinAncestors(path string) error {
	var up []string
	for d := filepath.Dir(path); d != "/" && !st.pinned[d]; d = filepath.Dir(d) {
		fd, err := proto.OpenNoSymlinks(d)
		if err != nil {
			return err
		}
		root, ro, err := mountRootOrReadOnly(fd)
		unix.Close(fd)
		if err != nil {
			return &os.PathError{Op: "statx", Path: d, Err: err}
		}
		if !root && !ro {
			up = append(up, d)
		}
	}
	for i := len(up) - 1; i >= 0; i-- {
		if err := st.pinDir(up[i]); err != nil {
			return err
		}
	}
	return nil
}

// mountRootOrReadOnly reports whether fd is the root of a mount, and
// whether its mount is read-only.
func mountRootOrReadOnly(fd int) (root, ro bool, err error) {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BASIC_STATS, &stx); err != nil {
		return false, false, err
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return false, false, err
	}
	return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, sfs.Flags&unix.ST_RDONLY != 0, nil
}

// pinDir binds the directory at path (following no symlink) onto itself,
// with the mounts beneath it.
func (st *setupState) pinDir(path string) error {
	fd, err := proto.OpenNoSymlinks(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return st.pinFD(fd, path)
}

// pinFD binds what fd, an O_PATH descriptor of path, is (a directory, or a
// file of any kind, a symlink or a socket included) onto itself, with the
// mounts beneath it, and records path as pinned.
func (st *setupState) pinFD(fd int, path string) error {
	clone, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return &os.PathError{Op: "open_tree", Path: path, Err: err}
	}
	defer unix.Close(clone)
	if err := unix.MoveMount(clone, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount", Path: path, Err: err}
	}
	if st.pinned == nil {
		st.pinned = map[string]bool{}
	}
	st.pinned[path] = true
	return nil
}

// beneathOther reports whether id lies beneath another of the paths.
func beneathOther(id proto.PathID, all []proto.PathID) bool {
	for _, o := range all {
		if strings.HasPrefix(id.Path, o.Path+"/") {
			return true
		}
	}
	return false
}

// coverAll makes one tmpfs holding one empty file, clones it (or the file)
// once per path, makes it unreadable, and moves the clones into place:
// onto each path opened again (past the pins now above it) without
// symlinks and checked to be what findHidden found.
func (st *setupState) coverAll(dirs, files []proto.PathID) error {
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
