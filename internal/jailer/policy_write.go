//go:build linux && cgo

package jailer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// openWrite opens path for writing only beneath a writable path. The
// kernel resolves it with RESOLVE_BENEATH from that directory, so no
// symlink or ".." can lead the write outside, whatever changes meanwhile;
// the directory it lands in is checked for hidden paths before anything
// is created or truncated there.
func (p *policy) openWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	for try := 0; try < 8; try++ {
		real, _, err := p.realPath(path)
		if err != nil {
			return nil, err
		}
		var f *os.File
		if root, ok := p.rootOf(real); ok {
			if p.protector.protected(real) {
				return nil, syscall.EROFS // read-only in the jail
			}
			f, err = p.openBeneath(root, real, flag, perm)
		} else if rel, ok := p.home.rel(real); ok {
			// The copy-on-write home is writable in the jail: so it is
			// here, through its mount.
			if rel == "." {
				rel = ""
			}
			g, gerr := p.home.acquire()
			if gerr == errHomeOff {
				continue // resolve again: the home is the host's now
			}
			if gerr != nil {
				return nil, gerr
			}
			f, err = p.openBeneathFD(g.root, rel, real, flag, perm)
			if err != nil {
				f = nil
			}
			p.home.release(f)
		} else {
			return nil, refusedWrite(real, flag)
		}
		if err != unix.EXDEV && err != unix.ELOOP {
			return f, err
		}
		// EXDEV, ELOOP: the path changed after it was resolved; resolve
		// again.
	}
	return nil, syscall.EROFS
}

// refusedWrite is the errno of a write outside the writable paths, in the
// kernel's order for a read-only mount: creating or truncating asks for
// write access to the mount first (EROFS); otherwise the file's own
// permission comes first (EACCES), then the mount (EROFS).
func refusedWrite(real string, flag int) error {
	if _, err := os.Lstat(real); err != nil || flag&os.O_TRUNC != 0 {
		return syscall.EROFS
	}
	if unix.Access(real, unix.W_OK) == unix.EACCES {
		return syscall.EACCES
	}
	return syscall.EROFS
}

func (p *policy) openBeneath(root proto.PathID, real string, flag int, perm os.FileMode) (*os.File, error) {
	rfd, err := root.Open()
	if err != nil {
		return nil, unwrapErrno(err)
	}
	defer unix.Close(rfd)
	rel := strings.TrimPrefix(strings.TrimPrefix(real, root.Path), "/")
	return p.openBeneathFD(rfd, rel, real, flag, perm)
}

// openBeneathFD opens rel beneath the directory rfd for writing, with the
// file permissions a command of the jail has (asJail).
func (p *policy) openBeneathFD(rfd int, rel, real string, flag int, perm os.FileMode) (*os.File, error) {
	return asJail(func() (*os.File, error) { return p.openBeneathAt(rfd, rel, real, flag, perm) })
}

// openBeneathAt opens rel beneath the directory rfd for writing: its
// directory first, checked for hidden paths, then the file.
func (p *policy) openBeneathAt(rfd int, rel, real string, flag int, perm os.FileMode) (*os.File, error) {
	dirRel, base := filepath.Split(rel)
	if base == "" {
		base = "."
	}
	if dirRel == "" {
		dirRel = "."
	}
	dfd, err := openat2(rfd, dirRel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	if len(p.hidden) > 0 {
		if p.fdHidden(dfd) {
			return nil, syscall.EACCES
		}
	}
	fd, err := openat2(dfd, base, flag&^os.O_TRUNC, perm)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), real)
	if p.fdHidden(fd) {
		f.Close()
		return nil, syscall.EACCES
	}
	if flag&os.O_TRUNC != 0 && !isDirOrSpecial(fd) {
		if err := unix.Ftruncate(fd, 0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func isDirOrSpecial(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG
}

// openat2 opens rel beneath dirfd, following no symlink at all: rel was
// resolved and checked (protected paths) as it was a moment ago, and a
// symlink put in its way since (a directory swapped for one) would lead
// the open to a path that was not checked. ELOOP then, and openWrite
// resolves again.
func openat2(dirfd int, rel string, flag int, perm os.FileMode) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	return resolve.Open(dirfd, rel, how)
}

// rootOf returns the writable path that real lies beneath.
func (p *policy) rootOf(real string) (proto.PathID, bool) {
	var best proto.PathID
	for _, w := range p.writable {
		if under(real, w.Path) && len(w.Path) > len(best.Path) {
			best = w
		}
	}
	return best, best.Path != ""
}

func (p *policy) inWritable(real string) bool {
	_, ok := p.rootOf(real)
	return ok
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
