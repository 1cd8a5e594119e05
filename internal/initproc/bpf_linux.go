package initproc

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
)

// loadProgram installs prog on every thread of this process (TSYNC), as
// libseccomp's Load does. no_new_privs is already set.
func loadProgram(prog []byte) error {
	_, err := installProgram(prog, false)
	return err
}

// installProgram installs prog on every thread; with listener, it asks
// for the program's listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, which
// TSYNC takes only with TSYNC_ESRCH, Linux 5.7) and returns it, close on
// exec. A refused listener is a *listenerError.
func installProgram(prog []byte, listener bool) (int, error) {
	return installProgramOn(prog, listener, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// installProgramOn is installProgram with flags: TSYNC, or 0 for the
// calling thread alone.
func installProgramOn(prog []byte, listener bool, flags uintptr) (int, error) {
	if err := proto.CheckFilter(prog); err != nil {
		return -1, err
	}
	insns := make([]unix.SockFilter, len(prog)/int(unsafe.Sizeof(unix.SockFilter{})))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&insns[0])), len(prog)), prog)
	fprog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	if listener {
		flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
	}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	switch {
	case listener && errno != 0:
		// EINVAL: a kernel without the flags; EBUSY: a filter in force
		// has a listener already (a supervisor that intercepts system calls).
		// Whatever it is, wsh tries a command's own jail next, whose
		// load of the same program without a listener says what the
		// host refuses.
		return -1, &listenerError{errno}
	case errno != 0:
		return -1, os.NewSyscallError("seccomp(SECCOMP_SET_MODE_FILTER)", errno)
	case listener:
		return int(r), nil
	case r != 0:
		// TSYNC: thread r could not be synchronised.
		return -1, os.NewSyscallError("seccomp(TSYNC)", unix.EAGAIN)
	}
	return -1, nil
}

// A listenerError is a filter refused for its listener: nothing was
// loaded.
type listenerError struct{ errno unix.Errno }

func (e *listenerError) Error() string {
	return "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): " + e.errno.Error()
}

func (e *listenerError) Unwrap() error { return e.errno }

// loadGitListener loads the full rung's git config program (on every
// thread) with its listener, and sends the listener to wsh on
// proto.GitFD, keeping no copy: wsh answers every rename (proto.GitGroup),
// and the init has none to make. A listener the host refuses (EBUSY: a
// filter in force has one, a supervisor of the host's; EINVAL: a kernel
// before 5.7) leaves the program out, and wsh is told why (a message of
// no descriptor: 0, the errno): the jail is made without it, a rename
// onto a protected config then fails on its read-only bind (EBUSY).
// Without a socket on GitFD (a caller of package launch that answers no
// rename) the program is left out as well.
func loadGitListener(prog []byte) error {
	var st unix.Stat_t
	if unix.Fstat(proto.GitFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil
	}
	defer unix.Close(proto.GitFD)
	fd, err := installProgram(prog, true)
	if le, ok := errors.AsType[*listenerError](err); ok {
		msg := []byte{0, byte(le.errno)}
		if err := unix.Sendmsg(proto.GitFD, msg, nil, nil, unix.MSG_NOSIGNAL); err != nil {
			return os.NewSyscallError("sendmsg(no seccomp listener)", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Sendmsg(proto.GitFD, []byte{1}, unix.UnixRights(fd), nil, unix.MSG_NOSIGNAL); err != nil {
		return os.NewSyscallError("sendmsg(the seccomp listener)", err)
	}
	return nil
}

// loadSeccomp loads the program the parent compiled. The init has no
// compiler of its own (it is built without cgo, so without libseccomp): an
// empty or malformed program fails the step. A lower rung's session's
// program (proto.SessionForkGroup) is loaded with its listener, which the
// zygote answers (st.listener).
func loadSeccomp(st *setupState) error {
	if st.spec.Rung == degrade.RungFull {
		// The policy on every thread, then the git config group with
		// its listener; a session's init (its protector's thread binds
		// what appears later) has the policy but the mount calls on
		// every thread, and the mount calls on the thread that forks the
		// commands alone (no TSYNC: no thread-wide load may follow it).
		// Every command inherits them all.
		if st.protector != nil {
			if err := proto.CheckFilter(st.spec.ForkFilter); err != nil {
				return err
			}
		}
		if err := loadProgram(st.spec.Filter); err != nil {
			return err
		}
		if err := loadGitListener(st.spec.GitFilter); err != nil {
			return err
		}
		if st.protector != nil {
			_, err := installProgramOn(st.spec.ForkFilter, false, 0)
			return err
		}
		return nil
	}
	if !st.spec.Session {
		return loadProgram(st.spec.Filter)
	}
	fd, err := installProgram(st.spec.Filter, true)
	st.listener = fd
	return err
}
