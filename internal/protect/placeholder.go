//go:build linux && cgo

package protect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// placeholders are what wsh made, on the host, where a protected path was
// missing: a mount point must exist in the file system, and a directory
// bound from the host has its entries on the host, so the jail cannot make
// one of its own (docs/sandbox.md, "What wsh leaves in a project"). Each
// is removed at the run's end while it is still as wsh made it (empty,
// or a commondir that names its gitdir: what it holds, not its ctime,
// which a chmod -R of the project changes) and still the one wsh made
// (device and inode), unless another run's jail still uses it.
//
// That other run is told by a lock on the placeholder's own inode: every
// run holds a shared flock(2) on each protected directory and regular file
// its jails bind (made by it or found there, since it cannot tell one
// another run made from the user's own), from before its jail binds it to
// the run's end; removal takes the exclusive lock, without waiting, and
// leaves the placeholder where it cannot. Else run B's read-only mount of
// run A's placeholder would be detached when A removes it at its end, and
// B's commands could make the name. What a run could not remove is kept
// in its ledger, and the next run removes it once it can (ledger.go), as
// it removes the placeholders of a wsh killed with SIGKILL.
type placeholders struct {
	mu     sync.Mutex
	ledger *ledger
	// shared notes the placeholders made in a shared directory (/tmp,
	// $TMPDIR: inShared), which every run of every user binds and holds,
	// in the ledger of the user's that depends on no home: the user's
	// next run, whatever its HOME (sudo's, another home's), removes one
	// that another run still held (nil: ledger notes them all).
	shared   *ledger
	inShared func(path string) bool
	held     map[inode]*os.File // the shared locks, one per inode
	made     []madePlaceholder
	warn     func(string) // says a failure of the ledger, once
	said     bool
}

// An inode is a file's device and inode number.
type inode struct{ dev, ino uint64 }

// A madePlaceholder is one placeholder this run made.
type madePlaceholder struct {
	path string
	id   inode
}

func statInode(st *unix.Stat_t) inode { return inode{uint64(st.Dev), st.Ino} }

// fileInfoOf is f's FileInfo, nil where it cannot be had.
func fileInfoOf(f *os.File) fs.FileInfo {
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	return fi
}

// newPlaceholders returns the run's placeholders, with their ledger in
// dir ("" for none), and removes those that runs gone before left.
// startTime is a process's start time (see KeepLedgers).
func newPlaceholders(dir string, startTime func(pid int) (uint64, error), warn func(string)) *placeholders {
	ph := &placeholders{ledger: newLedger(dir, startTime), held: map[inode]*os.File{}, warn: warn}
	ph.ledger.sweep()
	return ph
}

// make makes path as kind says and holds it. A path that another
// process made meanwhile is held as found (EEXIST). It returns what is
// at path now.
func (ph *placeholders) make(path string, kind placeholder) (fs.FileInfo, error) {
	f, err := makePlaceholder(path, kind)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// Not made (the directory is not this user's to write in): a
		// missing path, as before wsh tried.
		return nil, &os.PathError{Op: "mkdir", Path: path, Err: unix.ENOENT}
	}
	fi, lerr := os.Lstat(path)
	if f == nil {
		return fi, lerr // the caller holds it as any path found there
	}
	st := &unix.Stat_t{}
	if lerr != nil || unix.Fstat(int(f.Fd()), st) != nil || !os.SameFile(fi, fileInfoOf(f)) {
		// Removed or replaced as soon as made: by the user on the
		// host, since no jail sees it yet. It is not wsh's then.
		f.Close()
		return fi, lerr
	}
	m := madePlaceholder{path: path, id: statInode(st)}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if old := ph.held[m.id]; old != nil {
		old.Close()
	}
	ph.held[m.id] = f
	ph.made = append(ph.made, m)
	l := ph.ledgerFor(path)
	if err := l.add(m); err != nil && !ph.said && ph.warn != nil {
		ph.said = true
		ph.warn(fmt.Sprintf("wsh: cannot note the placeholders wsh makes in %s (%v): those another run still holds when this one ends, and all of them were wsh killed with SIGKILL, would stay", l.dir, errnoText(err)))
	}
	return fi, nil
}

// shareLedger notes the placeholders made where inShared says in a
// ledger in dir, and removes those that runs gone before left there.
func (ph *placeholders) shareLedger(dir string, inShared func(string) bool) {
	if dir == ph.ledger.dir {
		return
	}
	ph.shared, ph.inShared = newLedger(dir, ph.ledger.startTime), inShared
	ph.shared.sweep()
}

// KeepLedgers has p note the placeholders it makes in a ledger in the
// state directory state, else ("") in one of this user's in /dev/shm,
// those made in /tmp or $TMPDIR in the latter, and removes what runs
// gone before left in them (ledger.go). startTime is the start time of
// process pid (proc(5), /proc/PID/stat field 22), which tells a run's
// process from another that has its pid now; warn says, once, a ledger
// that cannot be written.
func (p *Protector) KeepLedgers(state string, startTime func(pid int) (uint64, error), warn func(string)) {
	p.ph = newPlaceholders(ledgerDir(state), startTime, warn)
	p.ph.shareLedger(ledgerDir(""), p.inShared)
}

// End removes, at the run's end, the placeholders the run made that are
// still as wsh made them and that no other run holds, and lets go of its
// locks (placeholders.end); with inUse (a command of the run may still
// run) the ledger keeps them for the next run.
func (p *Protector) End(inUse bool) { p.ph.end(inUse) }

// errnoText is err's errno where it has one (its text names no path),
// else err.
func errnoText(err error) error {
	if errno := syscall.Errno(0); errors.As(err, &errno) {
		return errno
	}
	return err
}

// ledgerFor is the ledger that notes the placeholder path.
func (ph *placeholders) ledgerFor(path string) *ledger {
	if ph.shared != nil && ph.inShared(path) {
		return ph.shared
	}
	return ph.ledger
}

// hold takes a shared lock on path, a protected directory or regular file
// that fi says is there, once for its inode in the run. ok is false when
// path is no longer what fi says (removed or replaced meanwhile): the
// caller looks again. An error is a lock that cannot be had: another
// process holds it exclusively (a command can lock a file it can open).
func (ph *placeholders) hold(path string, fi fs.FileInfo) (ok bool, err error) {
	if ph == nil || !fi.IsDir() && !fi.Mode().IsRegular() {
		return true, nil // no placeholder: nothing wsh would remove
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return true, nil
	}
	id := inode{uint64(st.Dev), st.Ino}
	ph.mu.Lock()
	_, held := ph.held[id]
	ph.mu.Unlock()
	if held {
		// Held, if path is still that inode: fi may be older than the
		// removal of what it shows (another run's placeholder, removed
		// at its end), whose inode number the file system has given to
		// one this run made since (a project's placeholder).
		var now unix.Stat_t
		return unix.Lstat(path, &now) == nil && statInode(&now) == id, nil
	}
	f, _, gone, err := ph.lockShared(path, fi)
	if err != nil || f == nil {
		return !gone, err
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	if ph.held[id] != nil {
		f.Close() // held by another protection meanwhile
	} else {
		ph.held[id] = f
	}
	return true, nil
}

// lockShared opens path, which fi says is there, and takes a shared lock
// on it. gone says path is no longer fi's (removed or replaced
// meanwhile). A nil file, not gone, is a path this user cannot open (of
// another user's, or made unreadable): its lock is not this run's to
// take, and no placeholder of this user's can be there (a placeholder
// is read-only in every jail that binds it).
func (ph *placeholders) lockShared(path string, fi fs.FileInfo) (f *os.File, st *unix.Stat_t, gone bool, err error) {
	want, _ := fi.Sys().(*syscall.Stat_t)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP), nil
	}
	f = os.NewFile(uintptr(fd), path)
	st = &unix.Stat_t{}
	if unix.Fstat(fd, st) != nil || want == nil || uint64(st.Dev) != uint64(want.Dev) || st.Ino != want.Ino {
		f.Close()
		return nil, nil, true, nil
	}
	if err := flockShared(fd); err != nil {
		f.Close()
		return nil, nil, false, fmt.Errorf("cannot lock %s, a protected path (%v): another process holds it", path, errnoText(err))
	}
	// Removed under the lock of another run's removal just before this
	// one got it: not there any more.
	var now unix.Stat_t
	if unix.Lstat(path, &now) != nil || statInode(&now) != statInode(st) {
		f.Close()
		return nil, nil, true, nil
	}
	return f, st, false, nil
}

// flockShared takes a shared lock on fd. An exclusive lock is held only
// for a moment by a run that removes a placeholder; one held for longer
// (by a command) is an error after lockWait.
func flockShared(fd int) error {
	deadline := time.Now().Add(lockWait)
	for {
		err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
		if err == nil || !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// lockWait is how long a shared lock is waited for.
const lockWait = 2 * time.Second

// end removes, at the run's end, each placeholder the run made that is
// still empty and unchanged and that no other run holds, then lets go of
// every lock and removes what runs gone before left. With inUse (a
// command of the run may still run: its jail binds them) it removes none:
// the ledger keeps them for the next run.
func (ph *placeholders) end(inUse bool) {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	kept := map[*ledger][]madePlaceholder{}
	for _, m := range ph.made {
		if inUse || removePlaceholder(m, ph.held[m.id]) == placeholderBusy {
			l := ph.ledgerFor(m.path)
			kept[l] = append(kept[l], m)
		}
	}
	for _, f := range ph.held {
		f.Close()
	}
	ph.held, ph.made = map[inode]*os.File{}, nil
	ph.mu.Unlock()
	for _, l := range []*ledger{ph.ledger, ph.shared} {
		if l != nil {
			l.close(kept[l])
			l.sweep()
		}
	}
}

// What removePlaceholder did.
type removal int

const (
	placeholderRemoved removal = iota // removed, or gone already
	placeholderBusy                   // another run holds it: kept for later
	placeholderKept                   // no longer wsh's (written to, replaced): left as it is
)

// removePlaceholder removes m if f, open on it, can be locked exclusively
// now, is still m (its inode), still at m's path (its directory
// opened without following a symlink), and empty.
func removePlaceholder(m madePlaceholder, f *os.File) removal {
	if f == nil {
		return placeholderKept
	}
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return placeholderBusy
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Nlink == 0 {
		return placeholderRemoved
	}
	if statInode(&st) != m.id {
		return placeholderKept
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if dir {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return placeholderKept
		}
		if names, err := f.Readdirnames(1); len(names) > 0 || err != io.EOF {
			return placeholderKept
		}
	} else if st.Mode&unix.S_IFMT != unix.S_IFREG || !asMade(fd, st.Size) {
		return placeholderKept
	}
	pfd, err := openDirNoFollow(filepath.Dir(m.path))
	if err != nil {
		return placeholderKept
	}
	defer unix.Close(pfd)
	var at unix.Stat_t
	name := filepath.Base(m.path)
	if unix.Fstatat(pfd, name, &at, unix.AT_SYMLINK_NOFOLLOW) != nil || statInode(&at) != m.id {
		return placeholderKept
	}
	flag := 0
	if dir {
		flag = unix.AT_REMOVEDIR // refused if an entry was made meanwhile
	} else if unix.Fstat(fd, &st) != nil || !asMade(fd, st.Size) {
		return placeholderKept
	}
	if unix.Unlinkat(pfd, name, flag) != nil {
		return placeholderKept
	}
	return placeholderRemoved
}

// asMade says that the file fd, of size bytes, holds what wsh writes in
// a placeholder file: nothing, or a commondir that names its gitdir.
func asMade(fd int, size int64) bool {
	if size > int64(len(commondirSelf)) {
		return false
	}
	b := make([]byte, len(commondirSelf)+1)
	n, err := unix.Pread(fd, b, 0)
	return err == nil && (n == 0 || string(b[:n]) == commondirSelf)
}

// openDirNoFollow opens the directory path, which is absolute, one
// component at a time, following no symlink: a directory on the way
// swapped for a symlink cannot send wsh's removal elsewhere.
func openDirNoFollow(path string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range splitPath(path) {
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// splitPath is path's components, "" and "." left out.
func splitPath(path string) []string {
	var out []string
	for _, c := range strings.Split(filepath.Clean(path), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// settle is what is at path, a protected path, once wsh made it where it
// is missing and make says how, and held it where it is there (fi and
// err are its lstat). It looks again where path changed meanwhile
// (another run removed its placeholder as this one found it).
func (p *Protector) settle(path string, make placeholder, fi fs.FileInfo, err error) (fs.FileInfo, error) {
	for try := 0; try < 3; try++ {
		if errors.Is(err, fs.ErrNotExist) && make != makeNone {
			fi, err = p.ph.make(path, make)
		}
		if err != nil {
			return fi, err
		}
		ok, herr := p.ph.hold(path, fi)
		if herr != nil || ok {
			return fi, herr
		}
		fi, err = os.Lstat(path) // not there any more: made again above
	}
	return nil, fmt.Errorf("%s changes as wsh looks at it", path)
}
