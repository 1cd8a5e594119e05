package initproc

import (
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/sessioninit"
)

// A protector binds read-only, in the live jail of a session, the
// protected paths that appeared after its setup (a git init, a git clone,
// an editor's directory): proto.MsgProtect. Binding needs CAP_SYS_ADMIN in
// the jail's user namespace, which the thread that forks the commands has
// dropped (capabilities(7): each thread has its own sets). So the
// protector is one goroutine locked, for the init's life, to an OS thread
// of PID 1 made before that drop, which keeps CAP_SYS_ADMIN alone (every
// other capability, the bounding set's included, is dropped on it) and
// no_new_privs, and runs nothing but bind: the requests the session's
// loop hands it.
//
// No command can reach it: a thread of PID 1 takes no request but from
// the loop, which reads only wsh's channel (SessionFD, close-on-exec,
// which no command inherits); PID 1 is non-dumpable (cloexecFrom3), and a
// command has no capability, so it can neither ptrace PID 1 nor open its
// descriptors or memory through /proc/1 (ptrace access mode needs
// CAP_SYS_PTRACE over a non-dumpable process), nor signal it but with the
// signals PID 1 handles (the kernel drops the others for a namespace's
// init).
type protector struct {
	st   *setupState
	reqs chan protectRequest
}

// A protectRequest is one Protect: the new pins and paths, and where the
// answer goes.
type protectRequest struct {
	pins, paths []proto.PathID
	done        chan error
}

// startProtector makes the protector of a session's init, on the full
// rung: called before the capabilities are dropped (steps).
func startProtector(st *setupState) error {
	if !st.spec.Session {
		return nil
	}
	if err := quietThreads(); err != nil {
		return err
	}
	p := &protector{st: st, reqs: make(chan protectRequest)}
	ready := make(chan error, 1)
	go p.run(ready)
	if err := <-ready; err != nil {
		return err
	}
	st.protector = p
	return nil
}

// run locks the goroutine to its thread for good (it never unlocks: the
// thread, with its capability, ends with the goroutine), narrows the
// thread's privileges, then serves.
func (p *protector) run(ready chan<- error) {
	runtime.LockOSThread()
	err := keepOnlyCapability(unix.CAP_SYS_ADMIN)
	if err == nil {
		err = os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	}
	ready <- err
	if err != nil {
		return
	}
	for r := range p.reqs {
		r.done <- p.bind(r.pins, r.paths)
	}
}

// protect has the protector bind pins and paths, and waits for its
// answer.
func (p *protector) protect(pins, paths []proto.PathID) error {
	r := protectRequest{pins: pins, paths: paths, done: make(chan error, 1)}
	p.reqs <- r
	return <-r.done
}

// quietThreads empties the effective set of every thread of PID 1 (the
// Go runtime's, made before any drop, had every capability PID 1 started
// with) and leaves in their permitted sets only what the two threads that
// go on need it for: CAP_SETPCAP to drop a bounding set, CAP_SYS_ADMIN for
// the protector's binds. It runs the same capset on each thread
// (AllThreadsSyscall: the init is built without cgo), where each has the
// same sets, then makes the calling thread's permitted set effective
// again: its setup goes on (dropCapabilities empties every set of it).
// The threads of PID 1 but the protector's then have no effective
// capability: what runs on them (the reaper, the signal relay, timers)
// needs none.
func quietThreads() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var now [2]unix.CapUserData
	if err := unix.Capget(&hdr, &now[0]); err != nil {
		return os.NewSyscallError("capget", err)
	}
	var quiet [2]unix.CapUserData
	for _, c := range []int{unix.CAP_SETPCAP, unix.CAP_SYS_ADMIN} {
		quiet[c/32].Permitted |= now[c/32].Permitted & (1 << (c % 32))
	}
	_, _, errno := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&quiet[0])), 0)
	switch errno {
	case 0:
	case unix.ENOTSUP:
		// An init linked with cgo (a program that embeds wsh is its
		// own init; so is a package's test binary): Go cannot reach
		// every thread there. They keep their sets, as every session's
		// did before the protector; wsh's own init is built without cgo.
		return nil
	default:
		return os.NewSyscallError("capset (every thread)", errno)
	}
	return raiseEffective()
}

// raiseEffective makes the calling thread's permitted set effective.
func raiseEffective() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capget", err)
	}
	for i := range data {
		data[i].Effective = data[i].Permitted
	}
	return os.NewSyscallError("capset", unix.Capset(&hdr, &data[0]))
}

// keepOnlyCapability drops every capability of the calling thread but c:
// the bounding set first (which needs CAP_SETPCAP, raised from the
// permitted set), the ambient set, then effective and permitted are c
// alone, and inheritable is empty.
func keepOnlyCapability(c int) error {
	if err := raiseEffective(); err != nil {
		return err
	}
	return dropCapabilitiesBut(c)
}

// bind pins each of pins (binds it onto itself: no command can rename or
// remove it) and binds each of paths read-only onto itself, as the
// protect step does at setup. Each path must lie in a writable path of
// the jail, and is opened without following any symlink (O_PATH, no
// magic link either) and checked to be the file wsh found (device and
// inode): the clone is made from that descriptor and moved onto the
// descriptor of the place, opened and checked again, so a command that
// swaps a directory on the way for a symlink, or for another directory,
// between wsh's look and the bind gets ESTALE or ELOOP, never a bind
// elsewhere. The first failure ends the request: what was bound before
// it stays bound (read-only, or pinned: never less protected).
func (p *protector) bind(pins, paths []proto.PathID) error {
	for _, id := range append(append([]proto.PathID(nil), pins...), paths...) {
		if !p.inWritable(id.Path) {
			return &os.PathError{Op: "protect", Path: id.Path, Err: unix.EPERM}
		}
	}
	pins = append([]proto.PathID(nil), pins...)
	sort.SliceStable(pins, func(a, b int) bool { return strings.Count(pins[a].Path, "/") < strings.Count(pins[b].Path, "/") })
	for _, id := range pins {
		fd, err := cloneTree(id, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		if err := moveMountTo(fd, id); err != nil {
			return err
		}
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	for _, id := range paths {
		fd, err := cloneTree(id, unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, ro); err != nil {
			unix.Close(fd)
			return &os.PathError{Op: "mount_setattr", Path: id.Path, Err: err}
		}
		if err := moveMountTo(fd, id); err != nil {
			return err
		}
	}
	return nil
}

// inWritable says that path, absolute and clean, lies strictly beneath a
// writable path of the jail.
func (p *protector) inWritable(path string) bool {
	if !strings.HasPrefix(path, "/") || path != cleanPath(path) {
		return false
	}
	for _, w := range p.st.spec.Writable {
		if w.Path == "/" || strings.HasPrefix(path, strings.TrimSuffix(w.Path, "/")+"/") {
			return true
		}
	}
	return false
}

// cleanPath is path with no empty, "." or ".." component.
func cleanPath(path string) string {
	parts := strings.Split(path, "/")
	out := parts[:0]
	for _, c := range parts {
		if c != "" && c != "." && c != ".." {
			out = append(out, c)
		}
	}
	return "/" + strings.Join(out, "/")
}

// Protect has the session's protector bind pins and paths
// (sessioninit.Jail).
func (st *setupState) Protect(pins, paths []proto.PathID) error {
	if st.protector == nil {
		return sessioninit.ErrNoProtector
	}
	return st.protector.protect(pins, paths)
}
