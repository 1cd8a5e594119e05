package initproc

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// devNodes are the host devices bound into the jail's /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

func mountPrivate(*setupState) error {
	return mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
}

// detach clones the writable paths and the device nodes before the root
// becomes read-only, so the clones keep the host's read-write flag.
func detach(st *setupState) error {
	nodev := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	for _, id := range st.spec.Writable {
		fd, err := cloneTree(id, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		st.writable = append(st.writable, fd)
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, nodev); err != nil {
			return &os.PathError{Op: "mount_setattr", Path: id.Path, Err: err}
		}
	}
	if st.spec.ShmDir.Path != "" {
		fd, err := cloneTree(st.spec.ShmDir, 0)
		if err != nil {
			return err
		}
		st.shm = fd
	}
	for _, n := range devNodes {
		fd, err := openTree("/dev/"+n, 0)
		if err != nil {
			return err
		}
		st.devices = append(st.devices, fd)
	}
	return nil
}

func openTree(path string, flags uint) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|flags)
	if err != nil {
		return -1, &os.PathError{Op: "open_tree", Path: path, Err: err}
	}
	return fd, nil
}

// cloneTree clones the mount tree at id, found without following symlinks
// and checked to be the same file as when wsh started.
func cloneTree(id proto.PathID, flags uint) (int, error) {
	src, err := id.Open()
	if err != nil {
		return -1, err
	}
	defer unix.Close(src)
	fd, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|flags)
	if err != nil {
		return -1, &os.PathError{Op: "open_tree", Path: id.Path, Err: err}
	}
	return fd, nil
}

func rootReadonly(*setupState) error {
	// nodev too: a device node already on the host's disks would otherwise
	// open (a char device is not refused by a read-only mount).
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, attr); err != nil {
		return &os.PathError{Op: "mount_setattr", Path: "/", Err: err}
	}
	return nil
}

// placeWritable binds the clones, shallow paths first so that a nested one
// lands on the bind above it.
func placeWritable(st *setupState) error {
	order := make([]int, len(st.spec.Writable))
	for i := range order {
		order[i] = i
	}
	depth := func(i int) int { return strings.Count(st.spec.Writable[i].Path, "/") }
	sort.SliceStable(order, func(a, b int) bool { return depth(order[a]) < depth(order[b]) })
	for _, i := range order {
		if err := st.placeMount(st.writable[i], st.spec.Writable[i]); err != nil {
			return err
		}
	}
	return st.pinGround()
}

// pinGround pins (pinAncestors) every directory above each writable path
// and above the copy-on-write home that a command could rename: the start
// directory /tmp/w/proj is a mount point in the jail, but /tmp/w, in the
// writable /tmp, is not. Moved, it would take the jail's mounts beneath
// it with it (the read-only protected paths, the covers of the hidden
// ones), and a command could make the start directory's path again, with
// its own .vscode/tasks.json, for the host to find there. Once per jail
// (a session's: once per session), after the writable paths are placed
// and before anything is mounted beneath them. Then the other users'
// entries of the shared directories (pinShared).
func (st *setupState) pinGround() error {
	for _, id := range st.spec.Writable {
		if err := st.pinAncestors(id.Path); err != nil {
			return err
		}
	}
	if st.spec.Home.Path != "" {
		if err := st.pinAncestors(st.spec.Home.Path); err != nil {
			return err
		}
	}
	return st.pinShared()
}

// placeMount mounts the detached tree fd on id's place (openPlace: made
// again if a command removed it from the copy-on-write home), and closes
// fd.
func (st *setupState) placeMount(fd int, id proto.PathID) error {
	defer unix.Close(fd)
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil {
		return &os.PathError{Op: "fstat", Path: id.Path, Err: err}
	}
	to, err := st.openPlace(id, true, fst.Mode&unix.S_IFMT == unix.S_IFDIR)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	if err := unix.MoveMount(fd, "", to, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount", Path: id.Path, Err: err}
	}
	return nil
}

// moveMountTo mounts the detached tree fd on id, opened again in the tree
// as it is now (after the mounts before it) and checked, and closes fd.
// The move goes to the checked descriptor, not to a path, so nothing can
// be swapped in between.
func moveMountTo(fd int, id proto.PathID) error {
	defer unix.Close(fd)
	to, err := id.Open()
	if err != nil {
		return err
	}
	defer unix.Close(to)
	if err := unix.MoveMount(fd, "", to, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount", Path: id.Path, Err: err}
	}
	return nil
}

func moveMount(fd int, to string) error {
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, to, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount", Path: to, Err: err}
	}
	return nil
}

// procReadOnly are the parts of /proc that act on the whole host, not on
// the jail's namespaces. With the identity map, the jail's root is the
// host's uid 0, and /proc/sys checks little more than the uid: a writable
// kernel.core_pattern would run a program as the host's root.
var procReadOnly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}

func mountProc(*setupState) error {
	if err := mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return err
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	for _, p := range procReadOnly {
		fd, err := openTree(p, unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOENT) {
			continue // not in this kernel
		}
		if err != nil {
			return err
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "mount_setattr", Path: p, Err: err}
		}
		if err := moveMount(fd, p); err != nil {
			return err
		}
	}
	return nil
}

// mountSys mounts a sysfs of the jail's own network namespace, so that
// /sys/class/net shows the jail's devices. With the host's network the
// host's /sys stays, read-only like the rest of the root.
func mountSys(st *setupState) error {
	if st.spec.HostNetwork {
		return nil
	}
	return mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// mountDev builds a minimal, read-only /dev: the device nodes bound from the
// host, a private devpts, a private /dev/shm and the usual symlinks.
func mountDev(st *setupState) error {
	const fl = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := mount("tmpfs", "/dev", "tmpfs", fl, "mode=0755,size=64k"); err != nil {
		return err
	}
	for i, n := range devNodes {
		p := "/dev/" + n
		if err := createEmpty(p); err != nil {
			return err
		}
		if err := moveMount(st.devices[i], p); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := unix.Mkdir(d, 0o755); err != nil {
			return &os.PathError{Op: "mkdir", Path: d, Err: err}
		}
	}
	if err := mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	if err := mount("tmpfs", "/dev/shm", "tmpfs", fl, "mode=1777"); err != nil {
		return err
	}
	if err := placeShm(st); err != nil {
		return err
	}
	for name, target := range devLinks {
		if err := unix.Symlink(target, "/dev/"+name); err != nil {
			return &os.PathError{Op: "symlink", Path: "/dev/" + name, Err: err}
		}
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/dev", 0, attr); err != nil {
		return &os.PathError{Op: "mount_setattr", Path: "/dev", Err: err}
	}
	return nil
}

var devLinks = map[string]string{
	"ptmx":   "pts/ptmx",
	"fd":     "/proc/self/fd",
	"stdin":  "/proc/self/fd/0",
	"stdout": "/proc/self/fd/1",
	"stderr": "/proc/self/fd/2",
}

func createEmpty(path string) error {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	return unix.Close(fd)
}

// chdir enters the target's working directory. The process kept its own
// from before the mounts; entering the directory again by path lands on
// the mounts now on it. The path is followed without magic links: a
// /proc/self/cwd (or /proc/*/root, /proc/*/fd/N, /dev/fd/N) in it would
// lead back to this process's own view from before the mounts, where no
// cover is on a hidden path. (wsh passes a resolved path.)
func chdir(st *setupState) error {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	fd, err := resolve.Open(unix.AT_FDCWD, st.spec.Dir, how)
	if err != nil {
		return &os.PathError{Op: "chdir", Path: st.spec.Dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fchdir(fd); err != nil {
		return &os.PathError{Op: "chdir", Path: st.spec.Dir, Err: err}
	}
	return nil
}

func mount(source, target, fstype string, flags uintptr, data string) error {
	if err := unix.Mount(source, target, fstype, flags, data); err != nil {
		return &os.PathError{Op: "mount " + fstype, Path: target, Err: err}
	}
	return nil
}

// placeShm binds the host's ShmDir, read-only, at its own path in the
// jail's fresh /dev/shm.
func placeShm(st *setupState) error {
	if st.shm < 0 {
		return nil
	}
	p := st.spec.ShmDir.Path
	if filepath.Dir(p) != "/dev/shm" {
		return &os.PathError{Op: "place", Path: p, Err: unix.EINVAL}
	}
	if err := unix.Mkdir(p, 0o755); err != nil {
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(st.shm, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return &os.PathError{Op: "mount_setattr", Path: p, Err: err}
	}
	return moveMount(st.shm, p)
}
