package initproc

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// mountHome puts the copy-on-write home over the host's home: the
// detached mount on HomeFD, a clone of the one overlay its keeper holds,
// moved onto the home's directory (checked by identity). The host's mounts
// beneath the home (spec.HomeMounts), which an overlay does not show, are
// cloned first, read-only as the root now is, and put back on top. The
// writable and hidden paths beneath the home come after, in their own
// steps.
func mountHome(st *setupState) error {
	if st.spec.Home.Path == "" {
		return nil
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(proto.HomeFD, &sfs); err != nil || sfs.Type != unix.OVERLAYFS_SUPER_MAGIC {
		return &os.PathError{Op: "home mount", Path: st.spec.Home.Path, Err: unix.EBADF}
	}
	var subs []int
	var subPaths []string
	for _, p := range st.spec.HomeMounts {
		fd, err := openTree(p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.ENOENT) {
			continue // gone from the host since wsh started
		}
		if err != nil {
			return err
		}
		subs, subPaths = append(subs, fd), append(subPaths, p)
	}
	var fst unix.Stat_t
	if err := unix.Fstat(proto.HomeFD, &fst); err != nil {
		return &os.PathError{Op: "fstat", Path: st.spec.Home.Path, Err: err}
	}
	if err := moveMountTo(proto.HomeFD, st.spec.Home); err != nil {
		return err
	}
	st.homeDev = fst.Dev
	for i, fd := range subs {
		var sst unix.Stat_t
		if err := unix.Fstat(fd, &sst); err != nil {
			return &os.PathError{Op: "fstat", Path: subPaths[i], Err: err}
		}
		to, err := st.openPlace(proto.PathID{Path: subPaths[i], Dev: sst.Dev, Ino: sst.Ino}, true, sst.Mode&unix.S_IFMT == unix.S_IFDIR)
		if err != nil {
			return err
		}
		err = unix.MoveMount(fd, "", to, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(to)
		unix.Close(fd)
		if err != nil {
			return &os.PathError{Op: "move_mount", Path: subPaths[i], Err: err}
		}
	}
	return nil
}

// inHome reports whether path lies beneath the copy-on-write home, once it
// is mounted.
func (st *setupState) inHome(path string) bool {
	return st.homeDev != 0 && strings.HasPrefix(path, st.spec.Home.Path+"/")
}

// openPlace opens the place where a mount for id goes, as an O_PATH
// descriptor. Outside the copy-on-write home it is id's own file, checked
// by identity (PathID.Open). Beneath the home, jailed commands (of any wsh
// of this user) may have changed the path in the home, and the place is
// what the home shows there now, followed without any symlink: a file of
// the home has no identity on the host to check, and none is needed, since
// what is mounted was checked where it came from. A place that is missing
// from the home is made again when create is set (a directory when dir is
// set, else an empty file): a command that removed a writable directory
// from its home must not make every later jail fail. A path that leads off
// the home's own file system (a host mount put back, a writable path
// placed before) is checked by identity again.
func (st *setupState) openPlace(id proto.PathID, create, dir bool) (int, error) {
	if !st.inHome(id.Path) {
		return id.Open()
	}
	fd, err := st.openPlaceInHome(id, create, dir)
	if err != nil {
		// What a command did to its home (a file where a writable path
		// goes) fails the home, not the jail: later jails go on without
		// it, and see the host's home, read-only.
		return -1, &homeError{err}
	}
	return fd, nil
}

// A homeError is a failure of the setup that the copy-on-write home
// caused, whatever step it came in: it is reported as StepHome.
type homeError struct{ err error }

func (e *homeError) Error() string { return e.err.Error() }
func (e *homeError) Unwrap() error { return e.err }

func (st *setupState) openPlaceInHome(id proto.PathID, create, dir bool) (int, error) {
	fd, err := proto.OpenNoSymlinks(id.Path)
	if errors.Is(err, unix.ENOENT) && create {
		if err := st.makeInHome(id.Path, dir); err != nil {
			return -1, err
		}
		fd, err = proto.OpenNoSymlinks(id.Path)
	}
	if err != nil {
		return -1, err
	}
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "fstat", Path: id.Path, Err: err}
	}
	if fst.Dev != st.homeDev && !id.Same(&fst) {
		unix.Close(fd)
		return -1, &os.PathError{Op: "verify (it changed since wsh started)", Path: id.Path, Err: unix.ESTALE}
	}
	if isDir := fst.Mode&unix.S_IFMT == unix.S_IFDIR; create && isDir != dir {
		unix.Close(fd)
		return -1, &os.PathError{Op: "place (in the jail's home it is of another type; wsh home reset clears the home)", Path: id.Path, Err: unix.ENOTDIR}
	}
	return fd, nil
}

// makeInHome makes path, and the directories above it that are missing,
// in the copy-on-write home, following no symlink.
func (st *setupState) makeInHome(path string, dir bool) error {
	home := st.spec.Home.Path
	parts := strings.Split(strings.TrimPrefix(path, home+"/"), "/")
	cur, err := proto.OpenNoSymlinks(home)
	if err != nil {
		return err
	}
	defer func() { unix.Close(cur) }()
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for i, c := range parts {
		last := i == len(parts)-1
		var err error
		switch {
		case last && !dir:
			var fd int
			fd, err = unix.Openat(cur, c, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
		default:
			err = unix.Mkdirat(cur, c, 0o755)
		}
		if err != nil && err != unix.EEXIST {
			return &os.PathError{Op: "make in the jail's home", Path: path, Err: err}
		}
		if last {
			return nil
		}
		next, err := resolve.Open(cur, c, how)
		if err != nil {
			return &os.PathError{Op: "make in the jail's home", Path: path, Err: err}
		}
		unix.Close(cur)
		cur = next
	}
	return nil
}
