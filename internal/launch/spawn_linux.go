//go:build linux && cgo

package launch

/*
#include <stdlib.h>
#include "spawn_linux.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
	"wsh/degrade"

	"golang.org/x/sys/unix"
)

// spawnSteps name the steps of spawn_linux.c's child.
var spawnSteps = map[C.int]degrade.StartStep{
	C.WSH_STEP_CLONE:     degrade.StartClone,
	C.WSH_STEP_SIGNALS:   degrade.StartSignals,
	C.WSH_STEP_SETSID:    degrade.StartSetsid,
	C.WSH_STEP_SETGROUPS: degrade.StartSetgroups,
	C.WSH_STEP_UID_MAP:   degrade.StartUIDMap,
	C.WSH_STEP_GID_MAP:   degrade.StartGIDMap,
	C.WSH_STEP_PDEATHSIG: degrade.StartPdeathsig,
	C.WSH_STEP_CAPS:      degrade.StartCaps,
	C.WSH_STEP_FILES:     degrade.StartFiles,
	C.WSH_STEP_EXEC:      degrade.StartExec,
}

// A SpawnError is a start of a jail init that failed: the clone, or a
// step of the child before its exec.
type SpawnError struct {
	Step degrade.StartStep
	Path string
	Err  syscall.Errno
}

func (e *SpawnError) Error() string {
	if e.Step == degrade.StartExec {
		return fmt.Sprintf("start the jail init: execve %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("start the jail init: %s: %v", e.Step, e.Err)
}

func (e *SpawnError) Unwrap() error { return e.Err }

// initCaps are the capabilities, in the jail's own user namespace, that
// the setup steps use: mounts, bringing up lo, listening on the proxy's
// port (below 1024), dropping the bounding set.
var initCaps = [C.WSH_SPAWN_NCAPS]uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE, unix.CAP_SETPCAP}

// namespaceFlags are the namespaces of a jail.
func namespaceFlags(hostNetwork bool) uintptr {
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !hostNetwork {
		flags |= unix.CLONE_NEWNET
	}
	return flags
}

// spawnAttr is how spawn starts a child.
type spawnAttr struct {
	// files are the child's descriptors 0, 1, ...: a jail init's six
	// (stdio, proto.ReportFD, proto.SpecFD, proto.ProtectFD), or eight with
	// the jail's home (proto.HomeFD, proto.HomeLockFD).
	files []*os.File
	// flags are the CLONE_NEW* flags (namespaceFlags).
	flags uintptr
	// orphan leaves out the parent-death signal: the home's keeper
	// outlives the wsh that started it.
	orphan bool
	// allCaps raises every capability of the new user namespace into the
	// ambient set, not only initCaps.
	allCaps bool
	// noCaps raises none: the child is in the host's user namespace (the
	// rungs without namespaces), where it keeps what it has.
	noCaps bool
}

// jailAttr is the attr of a jail init with files.
func jailAttr(hostNetwork bool, files ...*os.File) spawnAttr {
	return spawnAttr{files: files, flags: namespaceFlags(hostNetwork)}
}

// rungAttr is the attr of a jail init of rung r: jailAttr on the full
// rung; below it, no namespace and no capability raised.
func rungAttr(r degrade.Rung, hostNetwork bool, files ...*os.File) spawnAttr {
	if r != degrade.RungFull {
		return spawnAttr{files: files, noCaps: true}
	}
	return jailAttr(hostNetwork, files...)
}

// spawn starts exe with argv and env in fresh namespaces, with attr.files
// as its descriptors from 0 and no other, in a session of its own, with
// the identity map (the same uid and gid inside as outside), setgroups
// denied, SIGKILL as its parent-death signal (unless attr.orphan) and
// initCaps in its ambient set. It returns the pid once the child has
// exec'd.
func spawn(exe initExe, argv, env []string, attr spawnAttr) (int, error) {
	files := attr.files
	if len(files) == 0 || len(files) > C.WSH_SPAWN_FILES {
		return 0, &SpawnError{Step: degrade.StartFiles, Path: exe.path, Err: syscall.EINVAL}
	}
	path := exe.path
	for _, a := range [][]string{{path}, argv, env} {
		for _, v := range a {
			if strings.IndexByte(v, 0) >= 0 {
				return 0, &SpawnError{Step: degrade.StartArguments, Path: path, Err: syscall.EINVAL}
			}
		}
	}
	var mem cAlloc
	defer mem.free()
	s := (*C.struct_wsh_spawn)(mem.alloc(C.sizeof_struct_wsh_spawn))
	s.exe_fd = -1
	if exe.file != nil {
		s.exe_fd = C.int(exe.file.Fd())
	}
	s.path = mem.str(path)
	s.argv = mem.strs(argv)
	s.envp = mem.strs(env)
	for i, f := range files {
		s.files[i] = C.int(f.Fd())
	}
	s.nfiles = C.int(len(files))
	s.flags = C.ulong(attr.flags)
	if !attr.orphan {
		s.pdeathsig = C.int(unix.SIGKILL)
	}
	if attr.allCaps {
		s.allcaps = 1
	}
	if attr.noCaps {
		s.nocaps = 1
	}
	s.uid_map = mem.str(fmt.Sprintf("%d %d 1\n", os.Getuid(), os.Getuid()))
	s.gid_map = mem.str(fmt.Sprintf("%d %d 1\n", os.Getgid(), os.Getgid()))
	for i, c := range initCaps {
		s.caps[i] = C.int(c)
	}
	pid := int(C.wsh_spawn(s))
	for _, f := range files {
		runtime.KeepAlive(f) // its descriptor was in use until the exec
	}
	runtime.KeepAlive(exe.file)
	if s.err != 0 {
		if pid > 0 {
			var ws unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
					break
				}
			}
		}
		return 0, &SpawnError{Step: spawnSteps[s.step], Path: path, Err: syscall.Errno(s.err)}
	}
	return pid, nil
}

// cAlloc is C memory for one spawn: the child reads it, and it must not be
// Go memory (the child shares the address space with no Go runtime).
type cAlloc []unsafe.Pointer

func (m *cAlloc) alloc(n C.size_t) unsafe.Pointer {
	p := C.calloc(1, n)
	if p == nil {
		panic("wsh: out of memory")
	}
	*m = append(*m, p)
	return p
}

func (m *cAlloc) str(s string) *C.char {
	p := (*C.char)(m.alloc(C.size_t(len(s) + 1)))
	copy(unsafe.Slice((*byte)(unsafe.Pointer(p)), len(s)), s)
	return p
}

func (m *cAlloc) strs(ss []string) **C.char {
	p := (**C.char)(m.alloc(C.size_t(len(ss)+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	a := unsafe.Slice(p, len(ss)+1)
	for i, s := range ss {
		a[i] = m.str(s)
	}
	return p
}

func (m *cAlloc) free() {
	for _, p := range *m {
		C.free(p)
	}
}

// childFiles is a child's descriptor table: stdio on 0 to 2, and each
// other descriptor at the number the protocol gives it (proto.ReportFD,
// proto.SpecFD, ...), so that no descriptor is placed by its position in
// a list. Every number up to the highest must be given.
func childFiles(stdio [3]*os.File, at map[int]*os.File) ([]*os.File, error) {
	n := 3
	for fd := range at {
		n = max(n, fd+1)
	}
	files := make([]*os.File, n)
	copy(files, stdio[:])
	for fd, f := range at {
		if fd < 3 {
			return nil, fmt.Errorf("descriptor %d is a standard stream's", fd)
		}
		files[fd] = f
	}
	for fd, f := range files {
		if f == nil {
			return nil, fmt.Errorf("the child's descriptor %d is not given", fd)
		}
	}
	return files, nil
}
