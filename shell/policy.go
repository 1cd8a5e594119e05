package shell

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/jail"
)

// A policy is the in-process half of the jail. Builtins, redirections,
// globbing, source, cd and test run inside wsh's own process, so the jail
// around exec does not cover them; these handlers give them the jail's
// rules: writes only beneath the writable paths (EROFS elsewhere), and no
// access at all to the hidden paths (EACCES).
type policy struct {
	writable []jail.PathID
	hidden   []jail.PathID // Dev and Ino 0 where the path did not exist
}

// newPolicy records the identity of each writable path and of each hidden
// path that exists, as they are now.
func newPolicy(writable, hidden []string) (policy, error) {
	var p policy
	for _, w := range writable {
		id, err := jail.NewPathID(w)
		if err != nil {
			return policy{}, err
		}
		p.writable = append(p.writable, id)
	}
	for _, h := range hidden {
		id, err := jail.NewPathID(h)
		if errors.Is(err, fs.ErrNotExist) {
			id, err = jail.PathID{Path: h}, nil
		}
		if err != nil {
			return policy{}, err
		}
		p.hidden = append(p.hidden, id)
	}
	return p, nil
}

// options are the interp handlers that apply the policy.
func (p *policy) options() []interp.RunnerOption {
	return []interp.RunnerOption{
		interp.OpenHandler(p.open),
		interp.StatHandler(p.stat),
		interp.ReadDirHandler2(p.readDir),
		interp.AccessHandler(p.access),
	}
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

func (p *policy) open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	path := name
	if path != "" && !filepath.IsAbs(path) {
		// Not filepath.Join: cleaning "link/.." is not what the kernel does.
		path = interp.HandlerCtx(ctx).Dir + "/" + path
	}
	if isStdio(path) {
		return os.OpenFile(path, flag, perm)
	}
	if p.hiddenPath(path) {
		return nil, shellError(name, syscall.EACCES)
	}
	var f *os.File
	var err error
	if flag&writeFlags != 0 {
		f, err = p.openWrite(path, flag, perm)
	} else {
		f, err = os.OpenFile(path, flag, perm)
	}
	if err != nil {
		return nil, shellError(name, err)
	}
	// What was opened, not what the path said: a symlink swapped in
	// between the check and the open is caught here.
	if p.hiddenFD(f) {
		f.Close()
		return nil, shellError(name, syscall.EACCES)
	}
	return f, nil
}

// openWrite opens path for writing only beneath a writable path: the
// kernel resolves it with RESOLVE_BENEATH from that directory, so no
// symlink or ".." can lead the write outside, whatever changes meanwhile.
func (p *policy) openWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	for try := 0; try < 8; try++ {
		real, err := realPath(path)
		if err != nil {
			return nil, shellError(path, err)
		}
		root, ok := p.rootOf(real)
		if !ok {
			return nil, shellError(path, refusedWrite(real, flag))
		}
		f, err := openBeneath(root, real, flag, perm)
		if err != unix.EXDEV {
			if err != nil {
				return nil, shellError(path, err)
			}
			return f, nil
		}
		// EXDEV: the path changed after it was resolved; resolve again.
	}
	return nil, shellError(path, syscall.EROFS)
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

func openBeneath(root jail.PathID, real string, flag int, perm os.FileMode) (*os.File, error) {
	rel := strings.TrimPrefix(strings.TrimPrefix(real, root.Path), "/")
	if rel == "" {
		rel = "."
	}
	// The writable path itself is found without symlinks and checked to be
	// the directory wsh started with.
	dfd, err := root.Open()
	if err != nil {
		return nil, unwrapErrno(err)
	}
	defer unix.Close(dfd)
	how := &unix.OpenHow{Flags: uint64(flag) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for {
		fd, err := unix.Openat2(dfd, rel, how)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), real), nil
	}
}

// rootOf returns the writable path that real lies beneath.
func (p *policy) rootOf(real string) (jail.PathID, bool) {
	var best jail.PathID
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

// isHidden reports whether real is a hidden path or lies beneath one: by
// its path, or by the identity of itself or an ancestor, so that a hidden
// directory moved elsewhere by a command stays hidden.
func (p *policy) isHidden(real string) bool {
	for _, h := range p.hidden {
		if under(real, h.Path) {
			return true
		}
	}
	for dir := real; ; dir = filepath.Dir(dir) {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) == nil {
			for _, h := range p.hidden {
				if h.Dev != 0 && h.Same(&st) {
					return true
				}
			}
		}
		if dir == "/" || dir == "." {
			return false
		}
	}
}

// beneathHidden reports whether path, as written or as resolved, lies
// strictly beneath a hidden path.
func (p *policy) beneathHidden(path string) bool {
	in := func(x string) bool {
		return x != "/" && p.isHidden(filepath.Dir(x))
	}
	real, err := realPath(path)
	return in(filepath.Clean(path)) || (err == nil && in(real))
}

// hiddenPath reports whether path, as written or as resolved, is hidden.
func (p *policy) hiddenPath(path string) bool {
	if p.isHidden(filepath.Clean(path)) {
		return true
	}
	real, err := realPath(path)
	return err == nil && p.isHidden(real)
}

// hiddenFD reports whether the file f refers to lies under a hidden path.
func (p *policy) hiddenFD(f *os.File) bool {
	if len(p.hidden) == 0 {
		return false
	}
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	return err == nil && filepath.IsAbs(real) && p.isHidden(real)
}

// stat refuses what lies beneath a hidden path. The hidden path itself
// stats, as the mount over it does in the jail; opening, listing or
// entering it is refused.
func (p *policy) stat(ctx context.Context, path string, follow bool) (fs.FileInfo, error) {
	check := path
	if !follow {
		check = filepath.Dir(path) // the last component itself is not followed
	}
	if p.beneathHidden(check) || p.beneathHidden(filepath.Clean(path)) {
		return nil, shellError(path, syscall.EACCES)
	}
	if follow {
		return os.Stat(path)
	}
	return os.Lstat(path)
}

func (p *policy) readDir(ctx context.Context, path string) ([]fs.DirEntry, error) {
	if p.hiddenPath(path) {
		return nil, shellError(path, syscall.EACCES)
	}
	return os.ReadDir(path)
}

func (p *policy) access(ctx context.Context, path string, mode interp.AccessMode) error {
	if p.hiddenPath(path) {
		return shellError(path, syscall.EACCES)
	}
	if mode&interp.AccessWrite != 0 && !isStdio(path) {
		if real, err := realPath(path); err == nil && !p.inWritable(real) {
			return shellError(path, syscall.EROFS)
		}
	}
	return unix.Access(path, uint32(mode))
}

// stdio are the paths that name the shell's own standard streams or the
// harmless devices; writing to them is writing to what wsh already holds.
var stdio = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true, "/dev/tty": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
}

func isStdio(path string) bool {
	c := filepath.Clean(path)
	if stdio[c] {
		return true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(c, dir); ok && (n == "0" || n == "1" || n == "2") {
			return true
		}
	}
	return false
}

// realPath resolves path as the kernel would for an open, one component at
// a time: symlinks are followed (a dangling last one too, since O_CREAT
// creates its target), and ".." applies after them. The last component
// need not exist; a missing directory before it is ENOENT.
func realPath(path string) (string, error) {
	todo := strings.Split(path, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) && onlyDots(todo):
			return filepath.Join(next, strings.Join(todo, "/")), nil
		case err != nil:
			return "", unwrapErrno(err)
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", unwrapErrno(err)
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

func onlyDots(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

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
