package homekeeper

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/internal/initsys"
	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// A project's keeper mounts the caches of the home's shared layer on its
// own overlay: each mount of the project's overlay gets, at each cache
// directory (KeeperSpec.Caches), the same directory of a clone of the
// shared layer's mount, which the shared layer's keeper hands out. Jails
// and the shell's view get a clone of the whole tree. The shared clone's
// lock (its generation's, held shared) stays with the project's
// generation: the shared keeper mounts its overlay anew only once nothing
// uses the old one, and the project's generation is dropped only once
// nothing uses it.

// A sharedClone is a clone of the shared layer's mount and its lock; -1
// for none.
type sharedClone struct{ mount, lock int }

func (c sharedClone) close() {
	if c.mount > 0 {
		unix.Close(c.mount)
		unix.Close(c.lock)
	}
}

// mountCaches mounts the shared layer's caches on the overlay mfd, for a
// project's keeper; nothing for the shared layer's own.
func (k *keeper) mountCaches(mfd int) (sharedClone, error) {
	none := sharedClone{-1, -1}
	if k.spec.SharedSocketName == "" {
		return none, nil
	}
	c, err := k.sharedClone()
	if err != nil {
		return none, err
	}
	own, err := ownTrees(mfd, k.spec.Own)
	if err != nil {
		c.close()
		return none, err
	}
	defer initsys.CloseAll(own)
	mounted := false
	for _, rel := range k.spec.Caches {
		done, err := mountCache(c.mount, mfd, rel)
		if !mounted && err == errDetachedTarget {
			// A kernel before 6.15 mounts nothing onto a mount that
			// is not attached: the caches are the project's own, in
			// its layer, as everything else of the home (the host's
			// caches are still its lower layer).
			c.close()
			return none, nil
		}
		if err != nil {
			c.close()
			return none, err
		}
		mounted = mounted || done
	}
	if err := mountOwn(mfd, k.spec.Caches, k.spec.Own, own); err != nil {
		c.close()
		return none, err
	}
	return c, nil
}

// ownTrees clones, before the shared caches cover them, the project's
// own directories of rels in its overlay mfd (made where missing).
func ownTrees(mfd int, rels []string) ([]int, error) {
	var out []int
	for _, rel := range rels {
		dir, err := makeDirBeneath(mfd, rel)
		if err != nil {
			initsys.CloseAll(out)
			return nil, &os.PathError{Op: "make the project's own place", Path: rel, Err: err}
		}
		tree, err := unix.OpenTree(dir, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		unix.Close(dir)
		if err != nil {
			initsys.CloseAll(out)
			return nil, &os.PathError{Op: "open_tree", Path: rel, Err: err}
		}
		out = append(out, tree)
	}
	return out, nil
}

// mountOwn mounts each of the project's own trees (ownTrees) back at its
// path on mfd, now in a shared cache: made there where missing, crossing
// into the cache's mount (no symlink followed). Each directory between
// the cache's root and it is bound onto itself first (pinned): else a
// command of another project could rename one (go/pkg/mod/cache) in the
// shared layer and take the own directory's mount with it, and put its
// own repository where this project's git then runs (the review of the
// whole). One that cannot be made (a file there) is passed over: the
// own directory cannot be there either.
func mountOwn(mfd int, caches, rels []string, trees []int) error {
	const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS
	for i, rel := range rels {
		for _, d := range between(caches, rel) {
			if err := pinBeneath(mfd, d); err != nil {
				if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
					break
				}
				return err
			}
		}
		dst, err := makeDirsBeneath(mfd, rel, beneath)
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "make the project's own place", Path: rel, Err: err}
		}
		err = unix.MoveMount(trees[i], "", dst, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
		unix.Close(dst)
		if err != nil {
			return &os.PathError{Op: "move_mount (the project's own onto the shared cache)", Path: rel, Err: err}
		}
	}
	return nil
}

// between are the directories strictly between the cache of caches that
// holds rel and rel (go/pkg/mod/cache for go/pkg/mod/cache/vcs).
func between(caches []string, rel string) []string {
	var out []string
	for _, c := range caches {
		if !strings.HasPrefix(rel, c+"/") {
			continue
		}
		for d := filepath.Dir(rel); d != c && strings.HasPrefix(d, c+"/"); d = filepath.Dir(d) {
			out = append([]string{d}, out...)
		}
	}
	return out
}

// pinBeneath binds the directory rel of mfd (made where missing, crossing
// into the mounts on the way) onto itself.
func pinBeneath(mfd int, rel string) error {
	dir, err := makeDirsBeneath(mfd, rel, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return &os.PathError{Op: "make the shared cache's directory", Path: rel, Err: err}
	}
	defer unix.Close(dir)
	tree, err := unix.OpenTree(dir, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return &os.PathError{Op: "open_tree", Path: rel, Err: err}
	}
	defer unix.Close(tree)
	if err := unix.MoveMount(tree, "", dir, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount (pin the shared cache's directory)", Path: rel, Err: err}
	}
	return nil
}

// mountCache mounts rel of the shared mount on rel of the overlay mfd,
// making the directory in both where it is missing. A path that is not a
// directory in either (a symlink, a file: the host's home has it so) is
// left as it is: there the cache is the project's own. It reports whether
// it mounted the cache.
func mountCache(shared, mfd int, rel string) (bool, error) {
	src, err := makeDirBeneath(shared, rel)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "make the shared cache", Path: rel, Err: err}
	}
	defer unix.Close(src)
	dst, err := makeDirBeneath(mfd, rel)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "make the cache's place", Path: rel, Err: err}
	}
	defer unix.Close(dst)
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return false, &os.PathError{Op: "open_tree", Path: rel, Err: err}
	}
	defer unix.Close(tree)
	// Onto a mount that is not attached: Linux 6.15 and later.
	err = unix.MoveMount(tree, "", dst, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err == unix.EINVAL {
		return false, errDetachedTarget
	}
	if err != nil {
		return false, &os.PathError{Op: "move_mount (the shared cache onto the project's home)", Path: rel, Err: err}
	}
	return true, nil
}

// errDetachedTarget is move_mount's EINVAL onto the project's overlay,
// which is attached nowhere: before Linux 6.15, a mount cannot be moved
// onto a mount that is not attached.
var errDetachedTarget = errors.New("move_mount: the target mount is not attached (Linux 6.15 or later moves onto one)")

// makeDirBeneath opens rel beneath the directory dir as an O_PATH
// descriptor, making the directories that are missing (0755), following
// no symlink and crossing no mount.
func makeDirBeneath(dir int, rel string) (int, error) {
	return makeDirsBeneath(dir, rel, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS|unix.RESOLVE_NO_XDEV)
}

// makeDirsBeneath is makeDirBeneath with the resolve flags given: without
// RESOLVE_NO_XDEV it goes on into a mount on the way (a shared cache).
func makeDirsBeneath(dir int, rel string, resolveFlags uint64) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveFlags}
	cur, err := unix.Dup(dir)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(filepath.Clean(rel), "/") {
		if err := unix.Mkdirat(cur, c, 0o755); err != nil && err != unix.EEXIST {
			unix.Close(cur)
			return -1, err
		}
		next, err := resolve.Open(cur, c, how)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// sharedClone asks the shared layer's keeper for a clone of its mount,
// connecting to it (again) when there is no connection or it broke.
func (k *keeper) sharedClone() (sharedClone, error) {
	for try := 0; try < 2; try++ {
		if k.shared < 0 {
			c, err := k.dialShared()
			if err != nil {
				return sharedClone{-1, -1}, err
			}
			k.shared = c
		}
		c, err := askClone(k.shared)
		if err == nil || !errors.Is(err, errSharedGone) {
			return c, err
		}
		unix.Close(k.shared)
		k.shared = -1
	}
	return sharedClone{-1, -1}, &os.PathError{Op: "the shared layer's keeper", Path: k.spec.SharedSocketName, Err: unix.ECONNRESET}
}

var errSharedGone = errors.New("the shared layer's keeper is gone")

// dialShared connects to the shared layer's keeper, in the socket
// directory opened by identity.
func (k *keeper) dialShared() (int, error) {
	dir, err := k.spec.SocketDir.Open()
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	c, err := proto.DialKeeper(dir, k.spec.SharedSocketName)
	if err != nil {
		return -1, &os.PathError{Op: "connect to the shared layer's keeper", Path: k.spec.SharedSocketName, Err: err}
	}
	return c, nil
}

// askClone asks the keeper on c for a clone of its mount.
func askClone(c int) (sharedClone, error) {
	none := sharedClone{-1, -1}
	if _, err := unix.Write(c, []byte{proto.KeeperClone}); err != nil {
		return none, errSharedGone
	}
	var b [5]byte
	oob := make([]byte, unix.CmsgSpace(8))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(c, b[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || n == 0 {
		return none, errSharedGone
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if f, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, f...)
			}
		}
	}
	if n == 1 && b[0] == proto.KeeperMount && len(fds) == 2 {
		return sharedClone{fds[0], fds[1]}, nil
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	if n == 5 && b[0] == proto.KeeperFailed {
		return none, &os.PathError{Op: "the shared layer's keeper", Path: "clone", Err: syscall.Errno(uint32(b[1]) | uint32(b[2])<<8 | uint32(b[3])<<16 | uint32(b[4])<<24)}
	}
	return none, &os.PathError{Op: "the shared layer's keeper", Path: "clone", Err: unix.EPROTO}
}

// inUse says a project's keeper still holds a shared clone that a jail
// uses: the lock of its generation is held by others. Only a lock held
// says so: a lock file that cannot be opened (the state directory was
// removed) has nobody left to hold it.
func (k *keeper) inUse() bool {
	g := k.cur
	if g == nil || g.cache.mount < 0 {
		return false
	}
	l, err := lockFile(k.gens, g.lock, unix.LOCK_EX)
	if err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	unix.Close(l)
	return false
}
