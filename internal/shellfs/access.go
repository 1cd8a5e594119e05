//go:build linux && cgo

package shellfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/internal/proto"
	"wsh/internal/streams"
)

// The shell's own file access (the interpreter's open, read-dir, stat and
// access handlers) is done in the jail, by the file server (Files): a
// redirection, a glob, cd, test and source see what a command sees, by the
// kernel's rules and no others. What names the shell's own descriptors
// (streams.StdioFD: /dev/stdin, /dev/fd/1, /proc/self/fd/2, ..., and the devices
// /dev/null, /dev/tty, ...) stays in wsh, as it must. On the seccomp rung
// and unsandboxed there is no file policy, and the shell opens directly.

// Refuse is the error of an access to name where no jail can do it and
// none may be done without one: the script's end.
func (f *Files) Refuse(ctx context.Context, name string) error {
	v, _ := f.core.Refused()
	return f.AccessError(ctx, name, &refusedError{v})
}

// Absolute is name as the handler's directory makes it. Not
// filepath.Join: cleaning "link/.." is not what the kernel does.
func Absolute(ctx context.Context, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return interp.HandlerCtx(ctx).Dir + "/" + name
}

// OpenIn opens path in the jail.
func (f *Files) OpenIn(ctx context.Context, path string, flag int, mode uint32) (*os.File, error) {
	file, err := f.do(ctx, proto.FileRequest{Kind: proto.FileOpen, Flags: uint32(flag), Mode: mode, Path: path})
	if err == nil && file == nil {
		err = syscall.EIO // an open answered without a descriptor
	}
	return file, err
}

// Open is the interpreter's open handler. A file it makes has bash's
// mode, 0666, less the script's umask.
func (f *Files) Open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	path := Absolute(ctx, name)
	if fd, ok := streams.StdioFD(path); ok {
		// path is one of the canonical names (streams.StdioFD), so the name
		// opened is the name decided on.
		if fd < 0 || flag&writeFlags == 0 || !isFileFD(fd) {
			return os.OpenFile(path, flag, perm) // a device, tty or pipe
		}
		// A file given as the shell's own stream is written where the
		// jail finds its path, or `echo x >> /dev/stdin` writes a file
		// the jail may not.
		real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil || !filepath.IsAbs(real) {
			return nil, ShellError(name, syscall.EACCES)
		}
		path = real
	}
	var mode uint32
	if flag&os.O_CREATE != 0 {
		m, err := f.core.Umask(interp.HandlerCtx(ctx))
		if err != nil {
			return nil, ShellError(name, err)
		}
		mode = 0o666 &^ m
	}
	if flag&writeFlags == 0 {
		file, err := f.OpenIn(ctx, path, flag, mode)
		if err != nil {
			return nil, f.AccessError(ctx, name, err)
		}
		return file, nil
	}
	// A write: the protected paths of the shell's directory are what the
	// jail it is done in must protect, as a command's there (get), and,
	// where the rung cannot keep one from being made or changed, what is
	// said after, as after a command (Core.Write).
	dir, prot, done, err := f.core.Write(interp.HandlerCtx(ctx).Dir)
	if err != nil {
		return nil, ShellError(name, err) // as a command's jail: none rather than one that leaves it writable
	}
	file, err := f.doWith(ctx, proto.FileRequest{Kind: proto.FileOpen, Flags: uint32(flag), Mode: mode, Path: path}, dir, prot)
	done()
	if err == nil && file == nil {
		err = syscall.EIO
	}
	if err != nil {
		return nil, f.AccessError(ctx, name, err)
	}
	return file, nil
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

// Stat is the interpreter's stat handler: the file the jail finds,
// stated by wsh on a descriptor (O_PATH) the jail opened.
func (f *Files) Stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	path := Absolute(ctx, name)
	fl := unix.O_PATH
	if !follow {
		fl |= unix.O_NOFOLLOW
	}
	file, err := f.OpenIn(ctx, path, fl, 0)
	if err != nil {
		return nil, f.AccessError(ctx, path, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, ShellError(path, err)
	}
	return fi, nil
}

// StatFollow stats path, following symlinks, where the jail finds it.
func (f *Files) StatFollow(ctx context.Context, path string) (fs.FileInfo, error) {
	file, err := f.OpenIn(ctx, path, unix.O_PATH, 0)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	defer file.Close()
	return file.Stat()
}

// ReadDir is the interpreter's read-dir handler: the directory the jail
// finds, listed by wsh on a descriptor the jail opened. An entry's Info
// is asked of the jail too.
func (f *Files) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	path := Absolute(ctx, name)
	file, err := f.OpenIn(ctx, path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, f.AccessError(ctx, path, err)
	}
	defer file.Close()
	ents, err := readDirents(int(file.Fd()))
	if err != nil {
		return nil, ShellError(path, err)
	}
	out := make([]fs.DirEntry, 0, len(ents))
	for _, e := range ents {
		e.info = func() (fs.FileInfo, error) { return f.Stat(ctx, path+"/"+e.name, false) }
		out = append(out, e)
	}
	return out, nil
}

// Access is the interpreter's access handler: checked in the jail, with
// the jail's credentials.
func (f *Files) Access(ctx context.Context, name string, mode interp.AccessMode) error {
	path := Absolute(ctx, name)
	if _, err := f.do(ctx, proto.FileRequest{Kind: proto.FileAccess, Mode: uint32(mode), Path: path}); err != nil {
		return f.AccessError(ctx, path, err)
	}
	return nil
}

// A dirent is one entry of a directory the jail listed: its name and
// type as getdents gave them.
type dirent struct {
	name string
	typ  fs.FileMode // ^0: not given (DT_UNKNOWN), asked of Info
	info func() (fs.FileInfo, error)
}

func (d *dirent) Name() string { return d.name }
func (d *dirent) IsDir() bool  { return d.Type().IsDir() }
func (d *dirent) Type() fs.FileMode {
	if d.typ == ^fs.FileMode(0) {
		if fi, err := d.info(); err == nil {
			d.typ = fi.Mode().Type()
		} else {
			d.typ = 0
		}
	}
	return d.typ
}
func (d *dirent) Info() (fs.FileInfo, error) { return d.info() }
func (d *dirent) String() string             { return fs.FormatDirEntry(d) }

// readDirents lists the directory fd with getdents64, in wsh: no path is
// looked up on the host (os.File.ReadDir stats an entry of unknown type
// by its path).
func readDirents(fd int) ([]*dirent, error) {
	var out []*dirent
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, syscall.EIO
			}
			name := b[19:reclen]
			if i := indexZero(name); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				out = append(out, &dirent{name: s, typ: direntType(b[18])})
			}
			b = b[reclen:]
		}
	}
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

func direntType(t byte) fs.FileMode {
	switch t {
	case unix.DT_REG:
		return 0
	case unix.DT_DIR:
		return fs.ModeDir
	case unix.DT_LNK:
		return fs.ModeSymlink
	case unix.DT_FIFO:
		return fs.ModeNamedPipe
	case unix.DT_SOCK:
		return fs.ModeSocket
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		return fs.ModeDevice
	}
	return ^fs.FileMode(0)
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

// AccessError is the error of the shell's access to name: an error as a
// shell prints it, or, where no jail can do it (refusedError), the
// script's end, as a command's refusal ends it.
func (f *Files) AccessError(ctx context.Context, name string, err error) error {
	var re *refusedError
	if errors.As(err, &re) {
		fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "wsh: %s; WSH_REQUIRE_SANDBOX is set, so the shell does not open %s; the script stops\n", re.v.Message(), name)
		return f.core.FailClosed(ctx)
	}
	if ServerFailed(ctx, err) {
		// No answer of the jail's: not a file that is missing or refused.
		// A script that went on would take it for one ([ -e ] false).
		fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "wsh: %s: %v; the script stops\n", name, err)
		return f.core.FailClosed(ctx)
	}
	return ShellError(name, err)
}

// ServerFailed says that err is no answer of the jail's (an errno) but
// the file server's failure: it could not be started, or ended twice.
func ServerFailed(ctx context.Context, err error) bool {
	var errno syscall.Errno
	return err != nil && ctx.Err() == nil && !errors.As(err, &errno) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// ShellError is the error of an in-process operation, printed as a shell
// prints it: "wsh: PATH: Read-only file system". mvdan.cc/sh needs an
// *os.PathError (any other error stops the script).
func ShellError(path string, err error) error {
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

func (e errnoError) Error() string { return ErrnoText(e.errno) }
func (e errnoError) Unwrap() error { return e.errno }

// ErrnoText is errno as strerror says it, capitalized.
func ErrnoText(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	return string(bytes.ToUpper([]byte(s[:1]))) + s[1:]
}
