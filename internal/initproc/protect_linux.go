package initproc

import (
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/initsys"
	"wsh/internal/proto"
)

// protect makes the protected paths beneath the writable paths read-only:
// what a command writes there (a git hook, core.fsmonitor in .git/config,
// .vscode/tasks.json) would run on the host later, unsandboxed. First each
// directory between a writable path and a protected path is bound onto
// itself (a pin): a mount point cannot be renamed or removed, so no
// command can move .git away and put a .git of its own in its place. Then
// each protected path that exists is bound onto itself read-only. A
// protected path that is missing has a placeholder made in its place by
// wsh (package protect, placeholders), which is protected as any other,
// and removed by wsh when the run ends.
func protect(st *setupState) error {
	if st.spec.ProtectLater {
		// The parent found them while this init started.
		pins, paths, aborted, err := proto.ReadProtection(initsys.FDReader(proto.ProtectFD))
		unix.Close(proto.ProtectFD)
		if err != nil {
			return err
		}
		if aborted {
			return &os.PathError{Op: "protect", Path: "the protected paths", Err: unix.ECANCELED}
		}
		st.spec.Pins, st.spec.Protect = pins, paths
	}
	pins := append([]proto.PathID(nil), st.spec.Pins...)
	sort.SliceStable(pins, func(a, b int) bool { return strings.Count(pins[a].Path, "/") < strings.Count(pins[b].Path, "/") })
	for _, id := range pins {
		fd, err := cloneTree(id, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		if err := st.placeMount(fd, id); err != nil {
			return err
		}
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	for _, id := range st.spec.Protect {
		fd, err := cloneTree(id, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, ro); err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "mount_setattr", Path: id.Path, Err: err}
		}
		if err := st.placeMount(fd, id); err != nil {
			return err
		}
	}
	return nil
}

// awaitProtection is the lower rungs' protect step: with no mounts, the
// protected paths cannot be made read-only, but the target does not start
// before the parent has found them (and noted how they stand, to say
// after the command which changed), nor when it could not.
func awaitProtection(st *setupState) error {
	if !st.spec.ProtectLater {
		return nil
	}
	_, _, aborted, err := proto.ReadProtection(initsys.FDReader(proto.ProtectFD))
	unix.Close(proto.ProtectFD)
	if err != nil {
		return err
	}
	if aborted {
		return &os.PathError{Op: "protect", Path: "the protected paths", Err: unix.ECANCELED}
	}
	return nil
}
