//go:build linux && cgo

package gitmediate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// On the full rung, .git/config (and config.worktree) is bound read-only
// onto itself: git's rename of config.lock over it fails (EBUSY). The
// filter's git config group (proto.GitGroup) sends every rename to wsh,
// which answers it here:
//
//   - a rename whose destination is not a protected repository config,
//     resolved in the jail's view, goes on as made (CONTINUE). That holds
//     whatever the caller changes after wsh read its arguments: the
//     read-only bind stays, so the kernel refuses a rename onto it.
//   - a rename onto one is made by wsh: the source must be a regular file
//     of the same directory, of wsh's uid, with one link and at most
//     MaxConfig bytes; every entry it adds or changes must be on the
//     allowlist (gitkeys.go). Then wsh writes it into the host's config
//     in place (its inode: a rename on the host would detach the jail's
//     bind), removes the source and answers 0; otherwise it says why and
//     answers EPERM, leaving both files as they were.
//
// wsh reaches the jail's files only through /proc/PID/root, cwd and fd of
// the caller, with openat2's RESOLVE_IN_ROOT or RESOLVE_BENEATH and no
// magic link, so that it reads nothing the jail could not.

// MaxConfig bounds the config a command may have wsh write.
const MaxConfig = 1 << 20

// A Mediator answers the renames of one jail.
type Mediator struct {
	ours    *os.File                          // wsh's end of the socket on which the init sends its listener
	configs atomic.Pointer[map[devIno]string] // read without a lock by answer
	mu      sync.Mutex                        // one writer of configs at a time
	warn    io.Writer
	noRoom  *sync.Once // the Jailer's: the host left no room for the listener, said once
}

type devIno struct{ dev, ino uint64 }

// New makes the socket for a full rung's jail (launch.Request.Git
// is theirs) and starts serving it: it ends with the jail.
func New(warn io.Writer, noRoom *sync.Once) (*Mediator, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	m := &Mediator{ours: os.NewFile(uintptr(fds[0]), "wsh-git"), warn: warn, noRoom: noRoom}
	go m.serve()
	return m, os.NewFile(uintptr(fds[1]), "wsh-git-init"), nil
}

// SetConfigs records, of the protected paths, the repositories' configs
// (a config or config.worktree beside a HEAD): the files wsh writes itself.
func (m *Mediator) SetConfigs(paths []proto.PathID) {
	m.configs.Store(&map[devIno]string{})
	m.AddConfigs(paths)
}

// AddConfigs adds the repositories' configs of paths to those wsh writes
// itself: for a path protected in place during a session.
func (m *Mediator) AddConfigs(paths []proto.PathID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := map[devIno]string{}
	if old := m.configs.Load(); old != nil {
		maps.Copy(set, *old)
	}
	for _, p := range paths {
		if !ConfigName(filepath.Base(p.Path)) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(p.Path), "HEAD")); err != nil {
			continue
		}
		set[devIno{p.Dev, p.Ino}] = p.Path
	}
	m.configs.Store(&set)
}

// ConfigName says whether name is that of a repository's config wsh
// writes itself: config or config.worktree.
func ConfigName(name string) bool { return name == "config" || name == "config.worktree" }

// serve takes the init's listener and answers each notification until
// every process of the jail is gone (POLLHUP), or none came (the init
// failed before, or the jail was not made).
func (m *Mediator) serve() {
	defer m.ours.Close()
	buf, oob := make([]byte, 2), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := unix.Recvmsg(int(m.ours.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return
	}
	fds := proto.Rights(oob[:oobn])
	if len(fds) == 0 && n == 2 && buf[0] == 0 {
		m.sayNoRoom(unix.Errno(buf[1]))
		return
	}
	if len(fds) != 1 {
		proto.CloseRights(fds)
		return
	}
	listener := fds[0]
	defer unix.Close(listener)
	for {
		pfd := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process of the jail is left
		}
		var req proto.SeccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); e != 0 {
			if e == unix.EINTR || e == unix.ENOENT {
				continue // ENOENT: the caller was gone before it was read
			}
			return
		}
		resp := m.answer(listener, &req)
		// ENOENT: the caller is gone (killed meanwhile); nothing to say.
		unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}

// sysRename is rename(2)'s number, or a negative one where the
// architecture has none (arm64).
var sysRename = func() int32 {
	n, err := libseccomp.GetSyscallFromName("rename")
	if err != nil {
		return -1
	}
	return int32(n)
}()

// A renameCall is a rename's arguments: each path relative to its
// directory descriptor (AT_FDCWD or a descriptor of the caller's).
type renameCall struct {
	oldDir, newDir int
	oldPtr, newPtr uint64
	flags          uint32
}

func decodeRename(req *proto.SeccompNotif) (renameCall, bool) {
	a := req.Args
	switch req.Nr {
	case sysRename:
		return renameCall{oldDir: unix.AT_FDCWD, newDir: unix.AT_FDCWD, oldPtr: a[0], newPtr: a[1]}, true
	case unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		c := renameCall{oldDir: int(int32(a[0])), oldPtr: a[1], newDir: int(int32(a[2])), newPtr: a[3]}
		if req.Nr == unix.SYS_RENAMEAT2 {
			c.flags = uint32(a[4])
		}
		return c, true
	}
	return renameCall{}, false
}

// answer is the answer to one notification: CONTINUE for every rename but
// one onto a protected config (mediate). It is cheap for the rest: one
// read of the destination's name from the caller's memory, and a lookup
// in the jail's view only for a name "config" or "config.worktree".
func (m *Mediator) answer(listener int, req *proto.SeccompNotif) proto.SeccompNotifResp {
	cont := proto.SeccompNotifResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	c, ok := decodeRename(req)
	if !ok || c.flags&unix.RENAME_EXCHANGE != 0 {
		// An exchange with a protected config is refused by the kernel:
		// the config is a mount point (EBUSY).
		return cont
	}
	set := m.configs.Load()
	if set == nil || len(*set) == 0 {
		return cont
	}
	newPath, err := readCString(int(req.Pid), c.newPtr)
	if err != nil || !ConfigName(lastName(newPath)) {
		return cont
	}
	dir, name, err := openParent(int(req.Pid), c.newDir, newPath)
	if err != nil {
		return cont // the kernel's own answer is the same failure, or EBUSY
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return cont
	}
	host, ok := (*set)[devIno{st.Dev, st.Ino}]
	if !ok {
		return cont
	}
	errno := m.mediate(listener, req, c, dir, host, st)
	return proto.SeccompNotifResp{ID: req.ID, Error: -int32(errno)}
}

// lastName is the last component of a path as the kernel takes it ("" for
// one that ends in a slash).
func lastName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// readCString reads a path from the memory of pid (at most PATH_MAX
// bytes, with its NUL), page by page: a string that ends before an
// unmapped page is read whole. process_vm_readv is one call; where it is
// refused (wsh under a filter of its own), /proc/PID/mem is read.
func readCString(pid int, addr uint64) (string, error) {
	read := func(buf []byte, at uint64) (int, error) {
		local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
		remote := []unix.RemoteIovec{{Base: uintptr(at), Len: len(buf)}}
		return unix.ProcessVMReadv(pid, local, remote, 0)
	}
	var mem *os.File
	defer func() {
		if mem != nil {
			mem.Close()
		}
	}()
	var out []byte
	for len(out) < unix.PathMax {
		n := 4096 - int(addr%4096)
		buf := make([]byte, n)
		got, err := read(buf, addr)
		if err == unix.EPERM || err == unix.ENOSYS {
			if mem == nil {
				if mem, err = os.Open("/proc/" + strconv.Itoa(pid) + "/mem"); err != nil {
					return "", err
				}
			}
			got, err = mem.ReadAt(buf, int64(addr))
		}
		if i := bytes.IndexByte(buf[:max(got, 0)], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		if err != nil || got < n {
			return "", unix.EFAULT
		}
		out = append(out, buf...)
		addr += uint64(n)
	}
	return "", unix.ENAMETOOLONG
}

// openParent opens (O_PATH) the directory of path as the caller pid sees
// it, and gives the last component: an absolute path from its root
// (RESOLVE_IN_ROOT), a relative one beneath its working directory or
// dirFd (RESOLVE_BENEATH: a relative path that leaves it is not followed
// here, and the rename goes on to the kernel). No magic link is followed.
func openParent(pid, dirFd int, path string) (int, string, error) {
	i := strings.LastIndexByte(path, '/')
	dir, name := path[:i+1], path[i+1:]
	if name == "" || name == "." || name == ".." {
		return -1, "", unix.EINVAL
	}
	proc := "/proc/" + strconv.Itoa(pid) + "/"
	start, resolve := proc+"cwd", uint64(unix.RESOLVE_BENEATH)
	switch {
	case strings.HasPrefix(path, "/"):
		start, resolve = proc+"root", unix.RESOLVE_IN_ROOT
	case dirFd != unix.AT_FDCWD:
		start = proc + "fd/" + strconv.Itoa(dirFd)
	}
	dir = strings.TrimLeft(dir, "/")
	if dir == "" {
		dir = "."
	}
	sfd, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	defer unix.Close(sfd)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(sfd, dir, &how)
	if err != nil {
		return -1, "", err
	}
	return fd, name, nil
}

// idValid says that the notification still waits: its caller is the
// process whose memory and /proc entries were read.
func idValid(listener int, id uint64) bool {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	return e == 0
}

// errRefused is a rename refused, its reason said.
var errRefused = errors.New("refused")

// sayNoRoom says, once for the Jailer, that the jail was made without the
// git config group: the host refused its listener (errno).
func (m *Mediator) sayNoRoom(errno unix.Errno) {
	why := errno.Error()
	if errno == unix.EBUSY {
		why = "EBUSY: a seccomp supervisor of the host's holds the one listener a process may have"
	}
	if m.noRoom == nil {
		return
	}
	m.noRoom.Do(func() {
		fmt.Fprintf(m.warn, "wsh: the jail has no seccomp listener for wsh (%s): a command's write of a protected git config (git remote add, git config) is refused (EBUSY), as it was before wsh made them; the rest of the jail is as usual\n", why)
	})
}

// isConfig says whether st is one of the protected configs.
func (m *Mediator) isConfig(st unix.Stat_t) bool {
	c := m.configs.Load()
	if c == nil {
		return false
	}
	_, ok := (*c)[devIno{st.Dev, st.Ino}]
	return ok
}
