package initproc

import (
	"errors"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// resolverDirs stay visible under the covered /run with the host's network,
// so that /etc/resolv.conf, often a symlink into them, still resolves.
var resolverDirs = []string{"systemd/resolve", "resolvconf"}

// coverRun puts an empty, read-only tmpfs over /run (and so /var/run).
// Read-only mounts do not stop connect(2) on a socket file, and /run holds
// the host's daemons' sockets: docker, dbus, the user's session bus,
// postgres. A network namespace does not cover them. /run stays when a
// writable path is under it.
func coverRun(st *setupState) error {
	for _, w := range st.spec.Writable {
		if w.Path == "/run" || strings.HasPrefix(w.Path, "/run/") {
			return nil
		}
	}
	var keep []string
	if st.spec.HostNetwork {
		for _, d := range resolverDirs {
			if _, err := os.Stat("/run/" + d); err == nil {
				keep = append(keep, d)
			}
		}
	}
	var clones []int
	for _, d := range keep {
		fd, err := openTree("/run/"+d, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		clones = append(clones, fd)
	}
	mfd, err := runTmpfs(keep)
	if err != nil {
		return err
	}
	if err := moveMount(mfd, "/run"); err != nil {
		return err
	}
	for i, d := range keep {
		if err := moveMount(clones[i], "/run/"+d); err != nil {
			return err
		}
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/run", 0, attr); err != nil {
		return &os.PathError{Op: "mount_setattr", Path: "/run", Err: err}
	}
	return nil
}

// runTmpfs makes the detached tmpfs for /run, with the directories to keep
// and the shm symlink.
func runTmpfs(keep []string) (int, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsopen(tmpfs)", err)
	}
	defer unix.Close(fsfd)
	for k, v := range map[string]string{"mode": "0755", "size": "64k"} {
		if err := unix.FsconfigSetString(fsfd, k, v); err != nil {
			return -1, os.NewSyscallError("fsconfig("+k+")", err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, os.NewSyscallError("fsconfig(create)", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsmount", err)
	}
	for _, d := range keep {
		if err := mkdirAllAt(mfd, d); err != nil {
			unix.Close(mfd)
			return -1, err
		}
	}
	if err := unix.Symlinkat("/dev/shm", mfd, "shm"); err != nil {
		unix.Close(mfd)
		return -1, os.NewSyscallError("symlinkat(/run/shm)", err)
	}
	return mfd, nil
}

func mkdirAllAt(dfd int, rel string) error {
	p := ""
	for _, c := range strings.Split(rel, "/") {
		p += c
		if err := unix.Mkdirat(dfd, p, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return os.NewSyscallError("mkdirat(/run/"+p+")", err)
		}
		p += "/"
	}
	return nil
}
