//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/internal/proto"
)

// A policy is the in-process half of the jail. Builtins, redirections,
// globbing, source, cd and test run inside wsh's own process, so the jail
// around exec does not cover them; these handlers give them the jail's
// rules: writes only beneath the writable paths (EROFS elsewhere), and no
// access at all to the hidden paths (EACCES).
//
// Every decision is taken on a descriptor, not on a path that could change
// meanwhile: the handlers open what the path leads to (O_PATH where nothing
// is read), check that descriptor, and use it.
type policy struct {
	writable  []proto.PathID
	hidden    []proto.PathID // Dev and Ino 0 where the path did not exist
	learned   *learnedHidden // where hidden paths led since wsh started
	home      *homeView      // the copy-on-write home, or nil
	protector *protector     // the protected paths beneath the writable ones
}

// newPolicy records the identity of each writable path and of each hidden
// path that exists, as they are now.
func newPolicy(writable, hidden []string) (policy, error) {
	p := policy{learned: &learnedHidden{}}
	for _, w := range writable {
		id, err := proto.NewPathID(w)
		if err != nil {
			return policy{}, err
		}
		p.writable = append(p.writable, id)
	}
	for _, h := range hidden {
		id, err := proto.NewPathID(h)
		if errors.Is(err, fs.ErrNotExist) {
			id, err = proto.PathID{Path: h}, nil
		}
		if err != nil {
			return policy{}, err
		}
		p.hidden = append(p.hidden, id)
	}
	return p, nil
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

func (p *policy) open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	path := name
	if path != "" && !filepath.IsAbs(path) {
		// Not filepath.Join: cleaning "link/.." is not what the kernel does.
		path = interp.HandlerCtx(ctx).Dir + "/" + path
	}
	if fd, ok := stdioFD(path); ok {
		// path is one of the canonical names (stdioFD), so the name opened
		// is the name decided on.
		if fd < 0 || flag&writeFlags == 0 || !isFileFD(fd) {
			return os.OpenFile(path, flag, perm) // a device, tty or pipe
		}
		// A file given as the shell's own stream is written by the
		// rules of its path, or `echo x >> /dev/stdin` rewrites it.
		real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil || !filepath.IsAbs(real) {
			return nil, shellError(name, syscall.EACCES)
		}
		path = real
	}
	if p.hiddenName(path) {
		return nil, shellError(name, syscall.EACCES)
	}
	if flag&writeFlags != 0 {
		f, err := p.openWrite(path, flag, perm)
		if err != nil {
			return nil, shellError(name, err)
		}
		return f, nil
	}
	var f *os.File
	var err error
	for try := 0; try < 2; try++ {
		var host, rel string
		var inHome bool
		host, rel, inHome, err = p.locate(path, true)
		switch {
		case err != nil:
		case inHome:
			f, err = p.home.open(rel, flag, perm, true)
		default:
			f, err = os.OpenFile(host, flag, perm)
		}
		if err != errHomeOff {
			break // else once more, on the host: the home turned off
		}
	}
	if err != nil {
		return nil, shellError(name, err)
	}
	if p.fdHidden(int(f.Fd())) {
		f.Close()
		return nil, shellError(name, syscall.EACCES)
	}
	return f, nil
}

// stat refuses what lies beneath a hidden path. A hidden path itself
// stats as the mount over it does in the jail: empty, mode 000.
func (p *policy) stat(ctx context.Context, path string, follow bool) (fs.FileInfo, error) {
	if p.hiddenName(filepath.Dir(path)) {
		return nil, shellError(path, syscall.EACCES)
	}
	fl := unix.O_PATH | unix.O_CLOEXEC
	if !follow {
		fl |= unix.O_NOFOLLOW
	}
	f, err := p.openView(path, fl, follow)
	if err != nil {
		return nil, shellError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, shellError(path, err)
	}
	switch {
	case p.isHiddenRoot(fi) || p.isHiddenInHome(int(f.Fd())):
		return hiddenInfo{fi}, nil
	case p.fdHidden(int(f.Fd())):
		return nil, shellError(path, syscall.EACCES)
	}
	return fi, nil
}

func (p *policy) readDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	if p.hiddenName(path) {
		return nil, shellError(path, syscall.EACCES)
	}
	f, err := p.openView(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, true)
	if err != nil {
		return nil, shellError(path, err)
	}
	defer f.Close()
	if p.fdHidden(int(f.Fd())) {
		return nil, shellError(path, syscall.EACCES)
	}
	return f.ReadDir(-1)
}

func (p *policy) access(ctx context.Context, path string, mode interp.AccessMode) error {
	if p.hiddenName(path) {
		return shellError(path, syscall.EACCES)
	}
	f, err := p.openView(path, unix.O_PATH|unix.O_CLOEXEC, true)
	if err != nil {
		return shellError(path, err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if p.fdHidden(fd) {
		return shellError(path, syscall.EACCES)
	}
	if mode&interp.AccessWrite != 0 && !p.fdWritable(fd) {
		return shellError(path, syscall.EROFS)
	}
	if err := unix.Faccessat2(fd, "", uint32(mode), unix.AT_EMPTY_PATH|unix.AT_EACCESS); err != nil {
		return shellError(path, err)
	}
	return nil
}

// fdWritable reports whether the file fd refers to lies beneath a writable
// path, or is one of the shell's streams' kind (a tty, pipe or device).
func (p *policy) fdWritable(fd int) bool {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !filepath.IsAbs(real) {
		return false
	}
	if !isFileFD(fd) {
		return true
	}
	if p.home.owns(fdDev(fd)) {
		return true // the copy-on-write home is writable in the jail
	}
	return p.inWritable(real) && !p.protector.protected(real)
}

func fdDev(fd int) uint64 {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Dev
}

// locate says where the jail finds path: rel beneath the copy-on-write
// home (inHome), or host, a path on the host. Where the path leads into
// the home (or a symlink there leads out of it), it is resolved as the
// jail would; otherwise it is left as it is, for the kernel to resolve on
// the host. follow false leaves a last symlink unfollowed. A path that
// cannot be resolved where it leads into the home is that error: the
// host's file at the path may be one the jail's home does not show.
func (p *policy) locate(path string, follow bool) (host, rel string, inHome bool, err error) {
	if p.home == nil {
		return path, "", false, nil
	}
	var real string
	var via bool
	if follow {
		real, via, err = p.realPath(path)
	} else {
		dir, base := filepath.Split(path)
		real, via, err = p.realPath(dir)
		real = filepath.Join(real, base)
	}
	switch {
	case err != nil && via:
		return "", "", false, err
	case err != nil || !via:
		return path, "", false, nil
	}
	if rel, ok := p.home.rel(real); ok {
		return "", rel, true, nil
	}
	return real, "", false, nil
}

// statView stats path where the jail finds it, following symlinks.
func (p *policy) statView(path string) (fs.FileInfo, error) {
	if p.home == nil {
		return os.Stat(path)
	}
	f, err := p.openView(path, unix.O_PATH|unix.O_CLOEXEC, true)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	defer f.Close()
	return f.Stat()
}

// openView opens path where the jail finds it (locate).
func (p *policy) openView(path string, flags int, follow bool) (*os.File, error) {
	f, err := p.openViewOnce(path, flags, follow)
	if err == errHomeOff {
		f, err = p.openViewOnce(path, flags, follow) // now on the host
	}
	return f, err
}

func (p *policy) openViewOnce(path string, flags int, follow bool) (*os.File, error) {
	host, rel, inHome, err := p.locate(path, follow)
	switch {
	case err != nil:
		return nil, err
	case inHome:
		if !follow {
			flags |= unix.O_NOFOLLOW
		}
		return p.home.open(rel, flags, 0, false)
	}
	return openHost(host, flags, follow)
}

func openHost(path string, flags int, follow bool) (*os.File, error) {
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	return openFile(path, flags|unix.O_CLOEXEC)
}

// isHiddenInHome reports whether fd, opened through the copy-on-write
// home, is a hidden path itself.
func (p *policy) isHiddenInHome(fd int) bool {
	if !p.home.owns(fdDev(fd)) {
		return false
	}
	real, ok := p.home.pathOf(fd)
	if !ok {
		return false
	}
	for _, h := range p.hidden {
		if h.Path == real {
			return true
		}
	}
	return false
}

func openFile(path string, flags int) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// isFileFD reports whether fd is a regular file or a directory.
func isFileFD(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return true // cannot tell: treat it as one
	}
	m := st.Mode & unix.S_IFMT
	return m == unix.S_IFREG || m == unix.S_IFDIR
}

// hiddenInfo is a hidden path's own stat, as the jail shows it.
type hiddenInfo struct{ fs.FileInfo }

func (h hiddenInfo) Size() int64        { return 0 }
func (h hiddenInfo) Mode() fs.FileMode  { return h.FileInfo.Mode() & fs.ModeType }
func (h hiddenInfo) ModTime() time.Time { return time.Time{} }
func (h hiddenInfo) Sys() any           { return nil }

// shellError is the error of an in-process operation, printed as a shell
// prints it: "wsh: PATH: Read-only file system". mvdan.cc/sh needs an
// *os.PathError (any other error stops the script).
func shellError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errnoError{errno}
	}
	return &os.PathError{Op: "wsh:", Path: path, Err: err}
}

// errnoError prints an errno as strerror does, capitalized.
type errnoError struct{ errno syscall.Errno }

func (e errnoError) Error() string { return errnoText(e.errno) }
func (e errnoError) Unwrap() error { return e.errno }
