package initproc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// Shared directories: a writable directory that other users share is
// sticky (/tmp, /var/tmp), so that each user can remove or rename only
// their own entries in it. The sticky bit does not hold against the
// directory's owner, though: root owns /tmp, and the jail maps root to
// root, so a command of root's run could remove or rename another user's
// file, directory or socket there, and put its own in its place. So when
// the jail is made, each entry of such a directory that belongs to
// another uid is bound onto itself (pinFD, as the ground is pinned): a
// mount point cannot be removed, renamed or renamed over in the
// namespace it is mounted in (EBUSY). What the jail's own uid owns there
// stays its own to make and remove (go test's, mktemp's). A sticky
// directory of the jail's uid in a shared one (/tmp/.X11-unix) is shared
// too: its entries are pinned likewise, however deep, and itself where it
// holds one. A mount's root is not walked (another filesystem: a user's
// FUSE mount, which root may not even stat) and needs no pin.
//
// Entries made after the jail was made are not pinned (a session's jail
// lives as long as the run). An entry's owner can still remove it on the
// host: the kernel detaches the jail's mount then.

// pinShared pins the other users' entries of each writable path that is a
// shared directory of the jail's uid.
func (st *setupState) pinShared() error {
	uid, ok := ownUID()
	if !ok {
		return nil
	}
	for _, id := range st.spec.Writable {
		fd, err := proto.OpenNoSymlinks(id.Path)
		if err != nil {
			return err
		}
		shared, err := sharedBy(fd, uid)
		if err == nil && shared {
			_, err = st.pinSharedIn(fd, id.Path, uid)
		}
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// ownUID is the jail's uid, and whether a file's owner shown in the
// jail tells whether it is that uid. It does not for the overflow uid
// (65534): an owner the namespace does not map shows as that uid too.
func ownUID() (uint32, bool) {
	uid := uint32(os.Getuid())
	b, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	over, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil || perr != nil {
		over = 65534 // the kernel's default
	}
	return uid, uint64(uid) != over
}

// sharedBy reports whether fd is a sticky directory owned by uid.
func sharedBy(fd int, uid uint32) (bool, error) {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_UID, &stx); err != nil {
		return false, os.NewSyscallError("statx", err)
	}
	return stx.Mode&unix.S_IFMT == unix.S_IFDIR && stx.Mode&unix.S_ISVTX != 0 && stx.Uid == uid, nil
}

// pinSharedIn pins, in the shared directory dfd at path, each entry that
// is not uid's, and each sticky directory that is and holds one (walked
// in turn). It reports whether it pinned anything.
func (st *setupState) pinSharedIn(dfd int, path string, uid uint32) (bool, error) {
	names, err := dirNames(dfd, path)
	if err != nil {
		return false, err
	}
	found := false
	for _, name := range names {
		pinned, err := st.pinSharedEntry(dfd, filepath.Join(path, name), name, uid)
		if err != nil {
			return false, err
		}
		found = found || pinned
	}
	return found, nil
}

// pinSharedEntry pins the entry name of the shared directory dfd (at
// path) if another uid owns it, or if it is a shared directory itself
// that holds such an entry (one that holds none stays the jail's to
// remove). An entry gone meanwhile (its owner removed it on the host) is
// passed over; so is a mount's root, which cannot be moved already: it is
// asked first with an empty mask, which a FUSE mount that refuses root
// (no allow_root) answers too.
func (st *setupState) pinSharedEntry(dfd int, path, name string, uid uint32) (bool, error) {
	fd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, 0, &stx); err != nil {
		return false, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	if stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0 || st.pinned[path] {
		return true, nil
	}
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_MODE|unix.STATX_UID, &stx); err != nil {
		return false, &os.PathError{Op: "statx", Path: path, Err: err}
	}
	shared := stx.Mode&unix.S_IFMT == unix.S_IFDIR && stx.Mode&unix.S_ISVTX != 0 && stx.Uid == uid
	if stx.Uid == uid && !shared {
		return false, nil // the jail's own
	}
	if shared {
		// Its entries first: the pin of the directory, made after,
		// carries theirs with it.
		if others, err := st.pinSharedIn(fd, path, uid); err != nil || !others {
			return false, err
		}
	}
	if err := st.pinFD(fd, path); err != nil && !errors.Is(err, unix.ENOENT) {
		return false, err
	}
	// ENOENT: removed on the host since it was opened; nothing to pin.
	return true, nil
}

// dirNames lists the directory dfd, an O_PATH descriptor, at path.
func dirNames(dfd int, path string) ([]string, error) {
	rfd, err := unix.Openat(dfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(rfd), path)
	defer f.Close()
	return f.Readdirnames(-1)
}
