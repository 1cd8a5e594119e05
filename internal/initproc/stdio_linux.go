package initproc

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"wsh/internal/initsys"
	"wsh/internal/proto"
)

// reopenStdio gives the target its standard streams through the jail's own
// view of the file system. A descriptor opened outside holds the host's
// mount: through /proc/self/fd/N the target could open the same file again
// for writing, or, for a directory, walk the whole host from it, hidden
// paths and all (`cat /proc/self/fd/0/etc/x` with `< /`). So every stream
// that names a file, directory or device is opened again by its path inside
// the jail (read-only root, covered hidden paths, the jail's /dev), checked
// to be the same file, and put in place, offset kept. A stream that cannot
// be shown so fails the jail. Pipes, sockets and terminals stay as they
// are, and so does a file open for writing only: the user chose it as the
// command's output.
//
// A file the shell opened through its view of the copy-on-write home (a
// clone of the same overlay as the jail's home: the same device) has a
// path relative to that clone's root; it is opened again at the same path
// in the jail's home.
func reopenStdio(st *setupState) error {
	for fd := 0; fd <= 2; fd++ {
		if err := st.reopenStream(fd); err != nil {
			return err
		}
	}
	return nil
}

func (s *setupState) reopenStream(fd int) error {
	nfd, err := s.Reopened(fd)
	if err != nil || nfd == fd {
		return err
	}
	defer unix.Close(nfd)
	return os.NewSyscallError("dup3", unix.Dup3(nfd, fd, 0))
}

// Reopened returns the descriptor the target is to get for the stream fd:
// fd itself (closed, a pipe, a socket, a terminal, a file open for writing
// only), or a new one (close-on-exec, for the caller to close), opened
// again by its path in the jail, the same file, offset kept.
func (s *setupState) Reopened(fd int) (int, error) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fd, nil // closed
	}
	kind := st.Mode & unix.S_IFMT
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return fd, nil
	}
	acc := fl & unix.O_ACCMODE
	switch {
	case kind == unix.S_IFIFO || kind == unix.S_IFSOCK:
		return fd, nil
	case kind == unix.S_IFCHR && isTerminal(fd):
		return fd, nil
	case kind == unix.S_IFREG && acc == unix.O_WRONLY:
		return fd, nil
	}
	bad := func(path string) error {
		return &os.PathError{Op: "reopen stream " + strconv.Itoa(fd), Path: path, Err: proto.ErrStream}
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || len(path) == 0 || path[0] != '/' {
		return -1, bad(path)
	}
	flags := acc | fl&unix.O_APPEND | unix.O_CLOEXEC | unix.O_NOCTTY
	if kind == unix.S_IFDIR {
		flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	}
	// The path the kernel gives: a jail's own (the shell's file access is
	// done in the jail); a file of the copy-on-write home opened through
	// another mount of it is given relative to that mount, and is looked
	// for beneath the home too.
	paths := []string{path}
	if s.homeDev != 0 && st.Dev == s.homeDev && !strings.HasPrefix(path+"/", s.spec.Home.Path+"/") {
		paths = append(paths, strings.TrimSuffix(s.spec.Home.Path+path, "/"))
	}
	nfd := -1
	for _, p := range paths {
		// No symlink (the path the kernel gives has none): a component
		// swapped meanwhile for a symlink to /proc/self/fd/N (this
		// process's own descriptor of the stream) would open the stream
		// again through another view, the same file, and pass the check
		// below.
		fd, err := initsys.OpenNoSymlinks(p, flags|unix.O_NONBLOCK)
		if err != nil {
			continue
		}
		var nst unix.Stat_t
		if unix.Fstat(fd, &nst) != nil || nst.Dev != st.Dev || nst.Ino != st.Ino {
			unix.Close(fd)
			continue
		}
		nfd = fd
		break
	}
	if nfd < 0 {
		return -1, bad(path)
	}
	if _, err := unix.FcntlInt(uintptr(nfd), unix.F_SETFL, fl&^unix.O_ACCMODE); err != nil {
		unix.Close(nfd)
		return -1, os.NewSyscallError("fcntl", err)
	}
	if kind == unix.S_IFREG || kind == unix.S_IFDIR {
		if off, err := unix.Seek(fd, 0, 1); err == nil {
			if _, err := unix.Seek(nfd, off, 0); err != nil {
				unix.Close(nfd)
				return -1, os.NewSyscallError("lseek", err)
			}
		}
	}
	return nfd, nil
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
