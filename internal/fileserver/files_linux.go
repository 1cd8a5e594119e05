package fileserver

import (
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/internal/initsys"
	"wsh/internal/proto"
)

// init names the file server in ps, from the main thread: Go runs every
// package's init there, before main.main (see inside).
func init() {
	// Named in ps as what it is (exec'd as /proc/self/exe, it is "exe").
	// PR_SET_NAME names the calling thread, and /proc/PID/comm is the
	// main thread's: a package's init runs on it, main.main need not.
	if len(os.Args) > 0 && os.Args[0] == proto.FilesArg0 {
		name, _ := unix.BytePtrFromString(proto.FilesArg0)
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(name)), 0, 0, 0)
	}
}

// Main serves the shell's own file access (proto.FilesArg0): it is a
// command of the jail, forked and exec'd as every other, so what it opens,
// lists, stats and checks is what a command would, under the jail's
// mounts, /proc, Landlock domain, filter and credentials. Its standard
// input is the channel; each request is served on a goroutine of its own
// (an open of a FIFO waits for the other end, which a later request may
// open), and answered with the errno, and the descriptor an open made.
//
// It is non-dumpable, so that no command, of its uid, can take its channel
// through /proc or pidfd_getfd; it ignores the signals its session's init
// passes on to every command (an interrupt is the shell's to take); its
// umask is 0 (the mode a request gives has the script's umask applied).
// It ends when wsh closes its end of the channel.
func Main() int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 1
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE,
		syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	var st unix.Stat_t
	if unix.Fstat(0, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return 1
	}
	unix.Umask(0)
	var wmu sync.Mutex
	answer := func(a proto.FileAnswer, fd int) {
		var oob []byte
		if fd >= 0 {
			oob = unix.UnixRights(fd)
		}
		wmu.Lock()
		for unix.Sendmsg(0, a.Encode(), oob, nil, unix.MSG_NOSIGNAL) == unix.EINTR {
		}
		wmu.Unlock()
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	// The first answer, ID 0, carries a pidfd of the server itself: a
	// command of its jail, of its uid, can stop it (SIGSTOP cannot be
	// ignored), and wsh, waiting on an answer, lets it go on with it.
	if pfd, err := unix.PidfdOpen(unix.Getpid(), 0); err == nil {
		answer(proto.FileAnswer{ID: 0}, pfd)
	} else {
		answer(proto.FileAnswer{ID: 0, Errno: uint32(errnoOf(err))}, -1)
	}
	buf := make([]byte, proto.MaxFileRequest+1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(0, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		initsys.CloseAll(proto.Rights(oob[:oobn])) // wsh sends none
		if err != nil || n == 0 {
			return 0 // wsh closed its end
		}
		r, err := proto.DecodeFileRequest(buf[:n])
		if err != nil || flags&unix.MSG_TRUNC != 0 {
			return 1 // not a message wsh sends
		}
		go func() {
			if r.Kind == proto.FileResolve {
				real, errno := realPathIn(r.Path, 0)
				if len(real) > 2*4096 {
					real, errno = "", unix.ENAMETOOLONG
				}
				answer(proto.FileAnswer{ID: r.ID, Errno: uint32(errno), Path: real}, -1)
				return
			}
			fd, errno := serveFile(r)
			answer(proto.FileAnswer{ID: r.ID, Errno: uint32(errno)}, fd)
		}()
	}
}

// serveFile does r: the descriptor an open made (-1 for none), and the
// errno of the call.
func serveFile(r proto.FileRequest) (int, syscall.Errno) {
	if r.Path[0] != '/' {
		return -1, unix.EINVAL // wsh sends absolute paths alone
	}
	var err error
	fd := -1
	for {
		switch r.Kind {
		case proto.FileOpen:
			// Never the jail's controlling terminal: it has none.
			fd, err = unix.Open(r.Path, int(r.Flags)|unix.O_CLOEXEC|unix.O_NOCTTY, r.Mode&0o7777)
		case proto.FileAccess:
			err = unix.Faccessat2(unix.AT_FDCWD, r.Path, r.Mode&7, unix.AT_EACCESS)
			if err == unix.ENOSYS {
				err = unix.Faccessat(unix.AT_FDCWD, r.Path, r.Mode&7, unix.AT_EACCESS)
			}
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	return fd, 0
}

// realPathIn is the path path leads to in the jail: the kernel's own
// resolution (an O_PATH open, read back through /proc/self/fd); where the
// last component is missing, or is a symlink whose target is, its
// directory's resolution and the name, or the target's.
func realPathIn(path string, depth int) (string, syscall.Errno) {
	if depth > 40 {
		return "", unix.ELOOP
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == nil {
		defer unix.Close(fd)
		real, err := readlinkFD(fd)
		if err != nil {
			return "", errnoOf(err)
		}
		return real, 0
	}
	if err != unix.ENOENT {
		return "", errnoOf(err)
	}
	dir, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." || dir == "" {
		return "", unix.ENOENT
	}
	dreal, errno := realPathIn(dir, depth+1)
	if errno != 0 {
		return "", errno
	}
	next := filepath.Join(dreal, base)
	target, err := os.Readlink(next)
	if err != nil {
		return next, 0 // missing, and no symlink: what O_CREAT makes
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dreal, target)
	}
	return realPathIn(target, depth+1)
}

func readlinkFD(fd int) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.EIO
}
