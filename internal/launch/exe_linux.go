//go:build linux && cgo

package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"wsh/degrade"

	"golang.org/x/sys/unix"
)

// selfCopy is a sealed in-memory copy of the jail init, made once per
// process, from which every jail init is executed: the cgo-free init that
// a -tags wshinit build embeds, or else this binary itself. Nobody can
// change its contents: a command (of this session or another) that makes
// the wsh file unexecutable cannot make a jail fail with EACCES at exec.
// (Its mode can still be changed through /proc/PID/fd by the same uid
// outside the jail; namespacesAllowed is what keeps such an EACCES from
// reading as the host refusing the jail.)
var selfCopy = sync.OnceValues(copySelf)

// errNoMemfd says memfd_create itself was refused (vm.memfd_noexec=2, say).
var errNoMemfd = errors.New("no executable memfd")

// An initExe is what a jail init is executed from: an open file (the
// sealed copy, executed by its descriptor), or a path.
type initExe struct {
	file *os.File
	path string
}

// exePath is what a jail init is executed from: the sealed copy, or
// /proc/self/exe only where the kernel refuses executable memfds (then the
// init is this binary, embedded init or not). A copy that failed otherwise
// is an error, not a quiet fallback.
var exePath = func() (initExe, error) {
	f, err := selfCopy()
	switch {
	case errors.Is(err, errNoMemfd):
		return initExe{path: SelfExe}, nil
	case err != nil:
		return initExe{}, fmt.Errorf("wsh: a sealed copy of its own binary: %v", err)
	}
	return initExe{file: f, path: f.Name()}, nil
}

// PrepareSelfCopy makes the sealed copy now (a Jailer calls it when it is
// made, before any script runs).
func PrepareSelfCopy() { selfCopy() }

// initName is the name of the memfd that jail inits run from: the kernel
// shows it as /proc/PID/exe of every init ("/memfd:NAME (deleted)").
func initName() string {
	if len(embeddedInit) > 0 {
		return "wsh-jail-init"
	}
	return "wsh"
}

// InitDescription says which jail init this binary starts.
func InitDescription() string {
	if len(embeddedInit) > 0 {
		return fmt.Sprintf("embedded, without cgo (%d bytes)", len(embeddedInit))
	}
	return "this binary itself (built without -tags wshinit)"
}

func copySelf() (*os.File, error) {
	name := initName()
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err == unix.EINVAL {
		// Before Linux 6.3 there is no MFD_EXEC: memfds are executable.
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoMemfd, err)
	}
	mem := os.NewFile(uintptr(fd), name)
	if err = checkEmbeddedInit(); err != nil {
		mem.Close()
		return nil, err
	}
	if len(embeddedInit) > 0 {
		_, err = mem.Write(embeddedInit)
	} else {
		var self *os.File
		if self, err = os.Open(SelfExe); err == nil {
			_, err = io.Copy(mem, self)
			self.Close()
		}
	}
	if err == nil {
		// Executable, not readable: a process that execs it without
		// CAP_DAC_READ_SEARCH (every process of a jail: the jail's file
		// server, a lower rung's zygote) is non-dumpable from its exec
		// on (the kernel's would_dump), not only once its own code sets
		// it: in between, a command of its uid could otherwise take its
		// descriptors (pidfd_getfd) or trace it.
		err = mem.Chmod(0o111)
	}
	if err == nil {
		err = sealWrites(int(mem.Fd()))
	}
	if err == nil {
		// F_SEAL_EXEC (Linux 6.3) also freezes the mode; older kernels
		// refuse it, and the copy is still sealed against writes.
		unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, 0x20)
		_, err = unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL)
	}
	if err != nil {
		mem.Close()
		return nil, err
	}
	return mem, nil
}

// sealWaits are sealWrites' waits after each EBUSY, in order (about 3 s in all).
var sealWaits = []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond, time.Second, 2 * time.Second}

// sealWrites seals fd against every change of its contents. The kernel
// gives EBUSY while something holds a transient reference to one of its
// pages (it waits about 150 ms for them itself): seen once in a run of
// the whole suite under load, which made a wsh start unable to jail
// anything. EBUSY is tried again, a few times over about 3 s; any other
// error, or EBUSY that lasts, is the caller's.
func sealWrites(fd int) error {
	for i := 0; ; i++ {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
		if err != unix.EBUSY || i == len(sealWaits) {
			return err
		}
		time.Sleep(sealWaits[i])
	}
}

// namespacesAllowed checks a mode-1 refusal: it starts a child with the
// jail's namespaces and id maps, as the refused start did, that execs a
// path that does not exist. ENOENT at that exec means the clone and the id
// maps were allowed, so the refusal came from the exec of wsh's own
// binary, not from the host.
func namespacesAllowed(hostNetwork bool) bool {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return false
	}
	defer null.Close()
	pid, err := spawn(initExe{path: "/proc/self/nonexistent-wsh-check"}, []string{"wsh-check"}, []string{},
		jailAttr(hostNetwork, null, null, null, null, null))
	if err == nil { // cannot happen: nothing is there to run
		unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
		return false
	}
	var se *SpawnError
	return errors.As(err, &se) && se.Step == degrade.StartExec && se.Err == unix.ENOENT
}
