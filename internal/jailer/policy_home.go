//go:build linux && cgo

package jailer

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/launch"
	"wsh/internal/resolve"
)

// A homeView is the jail's copy-on-write home as the shell's own
// operations (redirections, source, globbing, cd, test, the command
// search) see it: through a clone of the same overlay the jails mount,
// held by descriptor. A file the shell writes to the home is the one a
// later command reads, and the other way round.
//
// A clone is held only while the shell uses it, and for viewIdle after:
// the keeper mounts the overlay anew (so that jails see what the host has
// changed in the home since) only once no clone of the old mount is in
// use, and a clone held for the Runner's life would keep it from ever
// doing so. A file the shell opened through a clone keeps it held until
// the file is closed.
type homeView struct {
	path     string   // the host's home, where the jail shows the overlay
	excluded []string // paths beneath path the jail shows from the host
	src      func() (launch.Clone, error)
	// lost is told, once, why the view could get no clone: the home is
	// not copy-on-write any more (it is called without mu held).
	lost func(error)

	mu     sync.Mutex
	gen    *viewGen
	ops    int        // operations under way on gen
	files  []*os.File // files opened on gen, handed to the interpreter
	timer  *time.Timer
	closed bool

	// off: the shell sees the host's home, read-only, as the jails do
	// once they get no copy-on-write home any more (or the Runner is
	// closed). It is never turned on again.
	off atomic.Bool
}

// A viewGen is one clone the view holds.
type viewGen struct {
	root int    // O_PATH descriptor of the mount's root
	dev  uint64 // the overlay's device: the same for every clone of a mount
	// caches are the devices of the shared layer's caches mounted on a
	// project's home (launch.SharedCaches): opened through the view too.
	caches []uint64
	clone  launch.Clone
	since  time.Time // when the view got it
}

// viewIdle is how long the view keeps a clone after its last use.
const viewIdle = 20 * time.Millisecond

// viewMaxHold is how long the view keeps one clone while it is used
// without a pause of viewIdle (a loop of the shell's own tests, waiting
// for a file): once it is older, the view lets it go as soon as no
// operation or file uses it, so that the keeper can mount the home anew
// and the loop sees what the host has changed.
var viewMaxHold = launch.KeeperRefresh

// newHomeView makes the view of the home at path, with its clones from
// src. excluded are the writable paths and the host's mounts beneath the
// home, which jails bind on top of it.
func newHomeView(path string, src func() (launch.Clone, error), excluded []string) *homeView {
	v := &homeView{path: path, src: src}
	for _, e := range excluded {
		if under(e, path) && e != path {
			v.excluded = append(v.excluded, e)
		}
	}
	return v
}

// errHomeOff says the view has just turned off: the operation is to be
// done again, on the host's home, as the jails now see it.
var errHomeOff = errors.New("the jail's home is not copy-on-write any more")

// acquire returns the clone to use for one operation, getting one from
// the keeper when the view holds none. Release it after. When the keeper
// gives none, the view turns off, says why to lost, and acquire returns
// errHomeOff.
func (v *homeView) acquire() (*viewGen, error) {
	g, err := v.acquireLocked()
	if errors.Is(err, errHomeOff) && !v.off.Swap(true) && v.lost != nil {
		v.lost(errors.Unwrap(err))
	}
	if err != nil && v.off.Load() {
		return nil, errHomeOff
	}
	return g, err
}

func (v *homeView) acquireLocked() (*viewGen, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, unix.EBADF
	}
	if v.gen == nil {
		if v.off.Load() {
			return nil, errHomeOff // turned off since the caller looked
		}
		c, err := v.src()
		if err != nil {
			return nil, &lostError{err}
		}
		fd, err := unix.Openat(int(c.Mount.Fd()), ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		c.Mount.Close()
		var st unix.Stat_t
		if err == nil {
			if err = unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
			}
		}
		if err != nil {
			c.Lock.Close()
			return nil, os.NewSyscallError("the jail's home", err)
		}
		v.gen = &viewGen{root: fd, dev: st.Dev, caches: cacheDevs(fd, st.Dev), clone: c, since: time.Now()}
	}
	v.ops++
	return v.gen, nil
}

// A lostError is why the keeper gave the view no clone.
type lostError struct{ err error }

func (e *lostError) Error() string        { return e.err.Error() }
func (e *lostError) Unwrap() error        { return e.err }
func (e *lostError) Is(target error) bool { return target == errHomeOff }

// release ends an operation on g; f, if not nil, is a file opened on g
// that the interpreter now holds.
func (v *homeView) release(f *os.File) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.ops--
	if f != nil {
		v.files = append(v.files, f)
	}
	if v.closed {
		if v.ops == 0 {
			v.drop()
		}
		return
	}
	if v.ops == 0 && v.gen != nil && time.Since(v.gen.since) >= viewMaxHold && !v.filesOpen() {
		v.drop()
		return
	}
	if v.timer == nil {
		v.timer = time.AfterFunc(viewIdle, v.idle)
	} else {
		v.timer.Reset(viewIdle)
	}
}

// idle lets the clone go once nothing uses it: no operation under way and
// every file opened on it closed.
func (v *homeView) idle() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ops > 0 || v.filesOpen() {
		v.timer.Reset(viewIdle)
		return
	}
	v.drop()
}

// filesOpen forgets the files opened on the clone that are closed, and
// reports whether any is still open.
func (v *homeView) filesOpen() bool {
	open := v.files[:0]
	for _, f := range v.files {
		if !isClosed(f) {
			open = append(open, f)
		}
	}
	v.files = open
	return len(v.files) > 0
}

func (v *homeView) drop() {
	if v.gen != nil {
		unix.Close(v.gen.root)
		v.gen.clone.Lock.Close()
		v.gen = nil
	}
}

// isClosed reports whether f has been closed.
func isClosed(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	return rc.Control(func(uintptr) {}) != nil
}

// disable makes the shell see the host's home from now on. A clone held
// for an operation under way is let go when it ends.
func (v *homeView) disable() {
	if v != nil {
		v.off.Store(true)
	}
}

func (v *homeView) close() {
	if v == nil {
		return
	}
	v.off.Store(true)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.closed = true
	if v.timer != nil {
		v.timer.Stop()
	}
	if v.ops == 0 {
		v.drop()
	}
}

// owns reports whether dev is the device of the clone the view holds: a
// descriptor on it was opened through the view.
func (v *homeView) owns(dev uint64) bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.gen != nil && (v.gen.dev == dev || slices.Contains(v.gen.caches, dev))
}

// cacheDevs are the devices of the shared caches mounted beneath the
// home's root, other than the home's own dev.
func cacheDevs(root int, dev uint64) []uint64 {
	var out []uint64
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	for _, rel := range launch.SharedCaches {
		fd, err := resolve.Open(root, rel, how)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Dev != dev && !slices.Contains(out, st.Dev) {
			out = append(out, st.Dev)
		}
		unix.Close(fd)
	}
	return out
}

// rel returns real's path relative to the home's root, when real (a path
// without symlinks) is one the jail shows from the copy-on-write home.
func (v *homeView) rel(real string) (string, bool) {
	if v == nil || v.off.Load() || !under(real, v.path) {
		return "", false
	}
	for _, e := range v.excluded {
		if under(real, e) {
			return "", false
		}
	}
	r := strings.TrimPrefix(real[len(v.path):], "/")
	if r == "" {
		r = "."
	}
	return r, true
}

// open opens rel, a path without symlinks, beneath the home's root: no
// symlink (one a command puts there meanwhile) or ".." can lead it out.
// keep says the file is handed to the interpreter, which closes it.
func (v *homeView) open(rel string, flag int, perm os.FileMode, keep bool) (*os.File, error) {
	g, err := v.acquire()
	if err != nil {
		return nil, err
	}
	f, err := g.open(rel, flag, perm)
	if keep && err == nil {
		v.release(f)
	} else {
		v.release(nil)
	}
	return f, err
}

func (g *viewGen) open(rel string, flag int, perm os.FileMode) (*os.File, error) {
	how := &unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	fd, err := resolve.Open(g.root, rel, how)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// isLink reports whether rel is a symlink in the home.
func (v *homeView) isLink(rel string) (bool, error) {
	f, err := v.open(rel, unix.O_PATH|unix.O_NOFOLLOW, 0, false)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFLNK, nil
}

// readlink reads the symlink rel of the home.
func (v *homeView) readlink(rel string) (string, error) {
	f, err := v.open(rel, unix.O_PATH|unix.O_NOFOLLOW, 0, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(int(f.Fd()), "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// pathOf returns the path, in the jail's view, of a descriptor opened
// through the home's mount, whose /proc/self/fd link the kernel gives
// relative to that mount's root.
func (v *homeView) pathOf(fd int) (string, bool) {
	l, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(l, "/") || strings.HasSuffix(l, " (deleted)") {
		return "", false
	}
	if l == "/" {
		return v.path, true
	}
	return v.path + l, true
}
