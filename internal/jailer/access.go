//go:build linux && cgo

package jailer

import (
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

	"wsh/degrade"
	"wsh/internal/proto"
	"wsh/internal/streams"
	"wsh/internal/umask"
)

// The shell's own file access (the interpreter's open, read-dir, stat and
// access handlers) is done in the jail, by the file server (files): a
// redirection, a glob, cd, test and source see what a command sees, by the
// kernel's rules and no others. What names the shell's own descriptors
// (streams.StdioFD: /dev/stdin, /dev/fd/1, /proc/self/fd/2, ..., and the devices
// /dev/null, /dev/tty, ...) stays in wsh, as it must. On the seccomp rung
// and unsandboxed there is no file policy, and the shell opens directly.

// jailedFiles says that the shell's file access is done in the jail: on
// the rungs with a file policy of the kernel's (mounts, Landlock).
func (j *Jailer) jailedFiles() bool {
	return !j.cfg.NoSandbox && (j.rung == degrade.RungFull || j.rung == degrade.RungLandlock)
}

// refusedFiles says that no jail can do the shell's file access, and
// none may be done without one: WSH_REQUIRE_SANDBOX, and the host refused
// the jail, or gave only a rung below the floor.
func (j *Jailer) refusedFiles() bool {
	_, refused := j.Refused()
	return refused && !j.cfg.NoSandbox
}

// refusal is the error of an access refusedFiles refuses.
func (j *Jailer) refusal() error {
	v, _ := j.Refused()
	return &refusedError{v}
}

// absolute is name as the handler's directory makes it. Not
// filepath.Join: cleaning "link/.." is not what the kernel does.
func absolute(ctx context.Context, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return interp.HandlerCtx(ctx).Dir + "/" + name
}

// openIn opens path in the jail.
func (j *Jailer) openIn(ctx context.Context, path string, flag int, mode uint32) (*os.File, error) {
	f, err := j.files.do(ctx, proto.FileRequest{Kind: proto.FileOpen, Flags: uint32(flag), Mode: mode, Path: path})
	if err == nil && f == nil {
		err = syscall.EIO // an open answered without a descriptor
	}
	return f, err
}

// open is the interpreter's open handler. A file it makes has bash's
// mode, 0666, less the script's umask.
func (j *Jailer) open(ctx context.Context, name string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	path := absolute(ctx, name)
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
			return nil, shellError(name, syscall.EACCES)
		}
		path = real
	}
	var mode uint32
	if flag&os.O_CREATE != 0 {
		m, err := umask.Shell(interp.HandlerCtx(ctx))
		if err != nil {
			return nil, shellError(name, err)
		}
		mode = 0o666 &^ m
	}
	if flag&writeFlags == 0 {
		f, err := j.openIn(ctx, path, flag, mode)
		if err != nil {
			return nil, accessError(ctx, name, err)
		}
		return f, nil
	}
	// A write: the protected paths of the shell's directory are what the
	// jail it is done in must protect, as a command's there (files.get),
	// and, where the rung cannot keep one from being made or changed, what
	// is said after, as after a command.
	if !j.writeMu.TryRLock() {
		return nil, shellError(name, errFilesEnded) // the Runner is closing
	}
	defer j.writeMu.RUnlock()
	full := j.rung == degrade.RungFull
	dir := j.hostDir(interp.HandlerCtx(ctx).Dir)
	prot, err := j.protector.Protection(dir, full)
	if err != nil {
		return nil, shellError(name, err) // as a command's jail: none rather than one that leaves it writable
	}
	if !full {
		prot.TakeStamps()
	}
	f, err := j.files.doWith(ctx, proto.FileRequest{Kind: proto.FileOpen, Flags: uint32(flag), Mode: mode, Path: path}, dir, &prot)
	j.noteShellWrite(dir, &prot)
	if err == nil && f == nil {
		err = syscall.EIO
	}
	if err != nil {
		return nil, accessError(ctx, name, err)
	}
	return f, nil
}

const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND

// stat is the interpreter's stat handler: the file the jail finds,
// stated by wsh on a descriptor (O_PATH) the jail opened.
func (j *Jailer) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	path := absolute(ctx, name)
	fl := unix.O_PATH
	if !follow {
		fl |= unix.O_NOFOLLOW
	}
	f, err := j.openIn(ctx, path, fl, 0)
	if err != nil {
		return nil, accessError(ctx, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, shellError(path, err)
	}
	return fi, nil
}

// statFollow stats path, following symlinks, where the jail finds it.
func (j *Jailer) statFollow(ctx context.Context, path string) (fs.FileInfo, error) {
	f, err := j.openIn(ctx, path, unix.O_PATH, 0)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	defer f.Close()
	return f.Stat()
}

// readDir is the interpreter's read-dir handler: the directory the jail
// finds, listed by wsh on a descriptor the jail opened. An entry's Info
// is asked of the jail too.
func (j *Jailer) readDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	path := absolute(ctx, name)
	f, err := j.openIn(ctx, path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, accessError(ctx, path, err)
	}
	defer f.Close()
	ents, err := readDirents(int(f.Fd()))
	if err != nil {
		return nil, shellError(path, err)
	}
	out := make([]fs.DirEntry, 0, len(ents))
	for _, e := range ents {
		e.info = func() (fs.FileInfo, error) { return j.stat(ctx, path+"/"+e.name, false) }
		out = append(out, e)
	}
	return out, nil
}

// access is the interpreter's access handler: checked in the jail, with
// the jail's credentials.
func (j *Jailer) access(ctx context.Context, name string, mode interp.AccessMode) error {
	path := absolute(ctx, name)
	if _, err := j.files.do(ctx, proto.FileRequest{Kind: proto.FileAccess, Mode: uint32(mode), Path: path}); err != nil {
		return accessError(ctx, path, err)
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

// accessError is the error of the shell's access to name: an error as a
// shell prints it, or, where no jail can do it (refusedError), the
// script's end, as a command's refusal ends it.
func accessError(ctx context.Context, name string, err error) error {
	var re *refusedError
	if errors.As(err, &re) {
		fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "wsh: %s; WSH_REQUIRE_SANDBOX is set, so the shell does not open %s; the script stops\n", re.v.Message(), name)
		return failClosed(ctx)
	}
	if serverFailed(ctx, err) {
		// No answer of the jail's: not a file that is missing or refused.
		// A script that went on would take it for one ([ -e ] false).
		fmt.Fprintf(interp.HandlerCtx(ctx).Stderr, "wsh: %s: %v; the script stops\n", name, err)
		return failClosed(ctx)
	}
	return shellError(name, err)
}

// serverFailed says that err is no answer of the jail's (an errno) but
// the file server's failure: it could not be started, or ended twice.
func serverFailed(ctx context.Context, err error) bool {
	var errno syscall.Errno
	return err != nil && ctx.Err() == nil && !errors.As(err, &errno) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
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

// resolveIn is the path path leads to in the jail (proto.FileResolve).
func (j *Jailer) resolveIn(ctx context.Context, path string) (string, error) {
	return j.files.resolve(ctx, path)
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}
