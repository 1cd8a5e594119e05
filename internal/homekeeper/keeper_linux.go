package homekeeper

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/initsys"
	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// Main runs the keeper of a copy-on-write home: in a user and mount
// namespace of its own (the only ones it needs to mount an overlay), it
// takes the home's locks, mounts the overlay once, detached, and then
// answers every wsh of the same user on its socket with a clone of that
// one mount, until nobody has been connected for its linger time.
//
// Why one keeper: overlayfs does not allow one upper directory to be used
// by two overlay mounts at once (the result is undefined). Every jail of
// the user, of every wsh, gets a clone of the keeper's mount instead: one
// overlay, one superblock, many mounts of it, as bind mounts are.
func Main() int {
	s, err := readKeeperSpec()
	if err == nil && initsys.InInitialUserNamespace() && os.Getuid() != 0 {
		// Only root's keeper runs in the host's user namespace (where a
		// mount beneath the home is not locked; see startKeeper).
		err = errors.New("home keeper: in the host's user namespace")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsh:", err)
		initsys.WriteReport(degrade.StepKeeperMount, syscall.EINVAL)
		return proto.ReservedStatus
	}
	// Hold no directory of the host busy. Not dumpable: an unprivileged
	// process of the same uid outside cannot ptrace it or reopen its
	// descriptors (though the owner of its user namespace, wsh's uid, has
	// CAP_SYS_PTRACE in it; jails cannot see it at all).
	unix.Chdir("/")
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	k, step, err := keep(s)
	if err != nil {
		initsys.WriteReport(step, err)
		return proto.ReservedStatus
	}
	unix.Close(proto.ReportFD) // ready: the parent reads EOF
	k.serve()
	return 0
}

func readKeeperSpec() (*proto.KeeperSpec, error) {
	if len(os.Args) != 1 {
		return nil, errors.New("home keeper: bad argv")
	}
	defer unix.Close(proto.SpecFD)
	return proto.ReadKeeperSpec(initsys.FDReader(proto.SpecFD))
}

// A keeper holds the home's mount and its listening socket.
type keeper struct {
	spec     *proto.KeeperSpec
	gens     int         // the directory of the generations' locks
	cur      *generation // the overlay mount it hands out, or nil
	listener int
	sockDir  int
	conns    map[int]bool
	shared   int // a project's keeper: its connection to the shared layer's keeper, or -1
}

// A generation is one mount of the overlay and its lock file; for a
// project's keeper, with the clone of the shared layer its caches come
// from, and that clone's lock, held for as long as the generation lives.
type generation struct {
	mount int
	lock  string // the lock file's name in the gens directory
	born  time.Time
	cache sharedClone
}

// keep takes the keeper lock, makes sure no mount of an earlier keeper is
// in use, mounts the overlay and listens, in that order, and returns the
// step that failed.
func keep(s *proto.KeeperSpec) (*keeper, degrade.Step, error) {
	locks, err := s.Locks.Open()
	if err != nil {
		return nil, degrade.StepKeeperLock, err
	}
	defer unix.Close(locks)
	// One keeper per home: another that holds the lock is, or is about
	// to be, listening (EWOULDBLOCK: the parent connects to it).
	if _, err := lockFile(locks, proto.KeeperLockName, unix.LOCK_EX); err != nil {
		return nil, degrade.StepKeeperLock, err
	}
	gens, err := openBeneath(locks, proto.GensDir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, degrade.StepKeeperLock, err
	}
	k := &keeper{spec: s, gens: gens, conns: map[int]bool{}, shared: -1}
	if err := k.clearGenerations(); err != nil {
		return nil, degrade.StepKeeperLock, err
	}
	if err := k.refresh(); err != nil {
		return nil, degrade.StepKeeperMount, err
	}
	if err := k.listen(); err != nil {
		return nil, degrade.StepKeeperListen, err
	}
	return k, degrade.StepNone, nil
}

// clearGenerations removes the locks an earlier keeper left, each once it
// holds it exclusively: EBUSY while one is held, by a jail of a keeper
// that was killed (its mount is still in use).
func (k *keeper) clearGenerations() error {
	dfd, err := openBeneath(k.gens, ".", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(dfd), proto.GensDir)
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return err
	}
	for _, n := range names {
		l, err := lockFile(k.gens, n, unix.LOCK_EX)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return &os.PathError{Op: "flock", Path: k.spec.Locks.Path + "/" + proto.GensDir + "/" + n, Err: unix.EBUSY}
		}
		if err != nil {
			return err
		}
		unix.Unlinkat(k.gens, n, 0)
		unix.Close(l)
	}
	return nil
}

// newGeneration mounts the overlay afresh, with a lock file of its own.
func (k *keeper) newGeneration() error {
	mfd, err := mountOverlay(k.spec)
	if err != nil {
		return err
	}
	cache, err := k.mountCaches(mfd)
	if err != nil {
		unix.Close(mfd)
		return err
	}
	var b [8]byte
	if _, err := unix.Getrandom(b[:], 0); err != nil {
		unix.Close(mfd)
		return os.NewSyscallError("getrandom", err)
	}
	name := hex.EncodeToString(b[:]) + ".lock"
	fd, err := openBeneath(k.gens, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL)
	if err != nil {
		cache.close()
		unix.Close(mfd)
		return err
	}
	unix.Close(fd)
	k.cur = &generation{mount: mfd, lock: name, born: time.Now(), cache: cache}
	return nil
}

// refresh mounts the overlay anew when the current mount is older than
// the refresh time and nothing uses it: nobody holds its lock. Only the
// keeper hands out its lock, one request at a time, so nobody can take it
// in between. The kernel refuses the new mount (EBUSY) while anything
// still holds the old one: the processes of a jail whose init was killed,
// which the kernel ends in a moment, or a descriptor a command passed out
// of its jail, which may stay. refresh tries for a short while; then the
// request fails, and the next one tries again.
func (k *keeper) refresh() error {
	g := k.cur
	if g != nil && time.Since(g.born) >= k.spec.Refresh {
		l, err := lockFile(k.gens, g.lock, unix.LOCK_EX)
		if err == nil {
			unix.Unlinkat(k.gens, g.lock, 0)
			unix.Close(l)
			unix.Close(g.mount)
			g.cache.close()
			k.cur = nil
		}
	}
	if k.cur != nil {
		return nil
	}
	var err error
	for try := 0; try < 10; try++ {
		if err = k.newGeneration(); !errors.Is(err, unix.EBUSY) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// openBeneath opens name beneath the directory dir, following no symlink.
func openBeneath(dir int, name string, flags int) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = 0o600
	}
	fd, err := resolve.Open(dir, name, how)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

// lockFile opens (creating it) the lock file name in the directory dir and
// takes a lock of kind on it without waiting. The lock lasts as long as
// the descriptor (and its copies) stays open.
func lockFile(dir int, name string, kind int) (int, error) {
	fd, err := openBeneath(dir, name, unix.O_RDWR|unix.O_CREAT)
	if err != nil {
		return -1, err
	}
	if err := unix.Flock(fd, kind|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return -1, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return fd, nil
}

// mountOverlay makes the home's overlay, detached: the host's home as the
// only lower layer, the upper and work directories in wsh's state
// directory. userxattr: in a user namespace overlayfs keeps its whiteouts'
// and opaque directories' marks in user.overlay.* xattrs (root's keeper,
// in the host's namespace, uses trusted.overlay.*). index=on: the kernel
// itself then refuses (EBUSY) to mount an upper directory that another
// overlay still uses ("exclusive upperdir protection"), whoever holds it:
// a jail whose init died before its other processes, a descriptor a
// command passed out of its jail.
func mountOverlay(s *proto.KeeperSpec) (int, error) {
	var layers [3]int
	for i, id := range []proto.PathID{s.Home, s.Upper, s.Work} {
		fd, err := openDirID(id)
		if err != nil {
			for _, l := range layers[:i] {
				unix.Close(l)
			}
			return -1, err
		}
		layers[i] = fd
	}
	defer func() {
		for _, l := range layers {
			unix.Close(l)
		}
	}()
	fsfd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("fsopen(overlay)", err)
	}
	defer unix.Close(fsfd)
	if err := overlayLayers(fsfd, layers); err != nil {
		return -1, err
	}
	if !initsys.InInitialUserNamespace() {
		if err := unix.FsconfigSetFlag(fsfd, "userxattr"); err != nil {
			return -1, os.NewSyscallError("fsconfig(userxattr)", err)
		}
	}
	if err := unix.FsconfigSetString(fsfd, "index", "on"); err != nil {
		return -1, os.NewSyscallError("fsconfig(index)", err)
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, &os.PathError{Op: "mount overlay", Path: s.Upper.Path, Err: err}
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, os.NewSyscallError("fsmount(overlay)", err)
	}
	return mfd, nil
}

// overlayLayers gives the overlay its layers by the descriptors opened and
// checked (Linux 6.13 takes descriptors), or else by their /proc/self/fd
// paths, which lead to the same directories.
func overlayLayers(fsfd int, layers [3]int) error {
	keys := [3]string{"lowerdir+", "upperdir", "workdir"}
	err := unix.FsconfigSetFd(fsfd, keys[0], layers[0])
	if err == nil {
		for i := 1; i < 3; i++ {
			if err := unix.FsconfigSetFd(fsfd, keys[i], layers[i]); err != nil {
				return os.NewSyscallError("fsconfig("+keys[i]+")", err)
			}
		}
		return nil
	}
	keys[0] = "lowerdir"
	for i, fd := range layers {
		if err := unix.FsconfigSetString(fsfd, keys[i], "/proc/self/fd/"+strconv.Itoa(fd)); err != nil {
			return os.NewSyscallError("fsconfig("+keys[i]+")", err)
		}
	}
	return nil
}

// openDirID opens id's directory for reading, following no symlink, and
// checks that it is still the same directory.
func openDirID(id proto.PathID) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := resolve.Open(unix.AT_FDCWD, id.Path, how)
	if err != nil {
		return -1, &os.PathError{Op: "openat2", Path: id.Path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !id.Same(&st) {
		unix.Close(fd)
		return -1, &os.PathError{Op: "verify (it changed since wsh started)", Path: id.Path, Err: unix.ESTALE}
	}
	return fd, nil
}

// listen binds the keeper's socket in its directory, opened by identity
// (a socket left by an earlier keeper is removed first: the keeper lock
// says that keeper is gone).
func (k *keeper) listen() error {
	dir, err := k.spec.SocketDir.Open()
	if err != nil {
		return err
	}
	k.sockDir = dir
	if err := unix.Unlinkat(dir, k.spec.SocketName, 0); err != nil && err != unix.ENOENT {
		return &os.PathError{Op: "unlink", Path: k.spec.SocketName, Err: err}
	}
	l, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	addr := &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(dir) + "/" + k.spec.SocketName}
	if err := unix.Bind(l, addr); err != nil {
		unix.Close(l)
		return os.NewSyscallError("bind", err)
	}
	if err := unix.Listen(l, 64); err != nil {
		unix.Close(l)
		return os.NewSyscallError("listen", err)
	}
	k.listener = l
	return nil
}

// serve answers until nobody has been connected for the linger time, or
// until the only one connected asks it to end. Its socket goes first, so
// that a wsh that comes too late starts a keeper of its own (which waits
// for this one's lock).
func (k *keeper) serve() {
	defer unix.Unlinkat(k.sockDir, k.spec.SocketName, 0)
	linger := int(k.spec.Linger / time.Millisecond)
	for {
		fds := []unix.PollFd{{Fd: int32(k.listener), Events: unix.POLLIN}}
		for c := range k.conns {
			fds = append(fds, unix.PollFd{Fd: int32(c), Events: unix.POLLIN})
		}
		timeout := -1
		if len(k.conns) == 0 {
			timeout = linger
		}
		n, err := unix.Poll(fds, timeout)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return // bug: poll of our own descriptors
		case n == 0 && k.inUse():
			continue // a jail still uses the caches' clone this keeper holds
		case n == 0:
			return // idle for the linger time
		}
		for _, f := range fds[1:] {
			if f.Revents != 0 && k.answer(int(f.Fd)) {
				return
			}
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			k.accept()
		}
	}
}

// accept takes a connection from a process of the keeper's own uid only.
// (A peer whose uid is not mapped in the keeper's namespace shows as the
// overflow uid, 65534: for a keeper of that uid, the socket's directory,
// 0700, is what keeps others out; root can reach it, as it can anything.)
func (k *keeper) accept() {
	c, _, err := unix.Accept4(k.listener, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
	if err != nil {
		return
	}
	cred, err := unix.GetsockoptUcred(c, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || cred.Uid != uint32(os.Getuid()) {
		unix.Close(c)
		return
	}
	k.conns[c] = true
}

// answer reads one request from c and answers it; it reports whether the
// keeper is to end.
func (k *keeper) answer(c int) (quit bool) {
	var b [1]byte
	n, err := unix.Read(c, b[:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return false
	}
	if n != 1 || err != nil {
		k.drop(c)
		return false
	}
	switch b[0] {
	case proto.KeeperClone:
		k.sendClone(c)
	case proto.KeeperQuit:
		if len(k.conns) == 1 {
			unix.Write(c, []byte{proto.KeeperQuitting})
			return true
		}
		unix.Write(c, []byte{proto.KeeperBusy})
	default:
		k.drop(c)
	}
	return false
}

func (k *keeper) drop(c int) {
	unix.Close(c)
	delete(k.conns, c)
}

// sendClone sends c a detached clone of the home's mount, with its
// generation's lock held shared (the lock travels with the descriptor).
func (k *keeper) sendClone(c int) {
	fd, lock, err := k.clone()
	if err != nil {
		errno := syscall.EIO
		errors.As(err, &errno)
		msg := binary.LittleEndian.AppendUint32([]byte{proto.KeeperFailed}, uint32(errno))
		unix.SendmsgN(c, msg, nil, nil, unix.MSG_NOSIGNAL)
		return
	}
	defer unix.Close(fd)
	defer unix.Close(lock)
	if _, err := unix.SendmsgN(c, []byte{proto.KeeperMount}, unix.UnixRights(fd, lock), nil, unix.MSG_NOSIGNAL); err != nil {
		k.drop(c)
	}
}

func (k *keeper) clone() (mount, lock int, err error) {
	if err := k.refresh(); err != nil {
		return -1, -1, err
	}
	lock, err = lockFile(k.gens, k.cur.lock, unix.LOCK_SH)
	if err != nil {
		return -1, -1, err
	}
	// AT_RECURSIVE: with the caches mounted on a project's overlay.
	mount, err = unix.OpenTree(k.cur.mount, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		unix.Close(lock)
		return -1, -1, err
	}
	return mount, lock, nil
}
