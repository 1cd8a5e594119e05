package main

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// high is garbage for the upper half of an int argument: the kernel reads
// only the low 32 bits, so a filter must too (libseccomp issue 383).
const high = 0xdead_beef_0000_0000

func ptr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// cstr is a NUL-terminated copy of s, kept alive by the caller.
func cstr(s string) *byte {
	b, err := unix.BytePtrFromString(s)
	if err != nil {
		fail("%v", err)
	}
	return b
}

func vsock(r results, _ *config) {
	var sv [2]int32
	for name, family := range map[string]uintptr{"": unix.AF_VSOCK, "|high bits": high | unix.AF_VSOCK} {
		r["socket(AF_VSOCK"+name+")"] = callClose(unix.SYS_SOCKET, family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		_, res := call(unix.SYS_SOCKETPAIR, family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, ptr(&sv))
		r["socketpair(AF_VSOCK"+name+")"] = res
	}
	// The rule must not catch other families.
	r["socket(AF_INET)"] = callClose(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	r["socket(AF_UNIX)"] = callClose(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	r["socket(AF_UNIX|high bits)"] = callClose(unix.SYS_SOCKET, high|unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	_, res := call(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, ptr(&sv))
	if res == "ok" {
		unix.Close(int(sv[0]))
		unix.Close(int(sv[1]))
	}
	r["socketpair(AF_UNIX)"] = res
	_, res = call(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0, ptr(&sv))
	if res == "ok" {
		unix.Close(int(sv[0]))
		unix.Close(int(sv[1]))
	}
	r["socketpair(AF_UNIX, SOCK_DGRAM)"] = res
	_, res = call(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0, ptr(&sv))
	if res == "ok" {
		unix.Close(int(sv[0]))
		unix.Close(int(sv[1]))
	}
	r["socketpair(AF_UNIX, SOCK_RAW)"] = res
}

func ioURing(r results, _ *config) {
	var params [120]byte // struct io_uring_params
	fd, res := call(unix.SYS_IO_URING_SETUP, 1, ptr(&params))
	r["io_uring_setup"] = res
	if res != "ok" {
		fd = ^uintptr(0) // -1: a filter answers before the kernel looks
	} else {
		defer unix.Close(int(fd))
	}
	_, r["io_uring_enter"] = call(unix.SYS_IO_URING_ENTER, fd, 0, 0, 0, 0, 0)
	const registerProbe, ops = 8, 256 // IORING_REGISTER_PROBE
	var probe [16 + ops*8]byte
	_, r["io_uring_register"] = call(unix.SYS_IO_URING_REGISTER, fd, registerProbe, ptr(&probe), ops)
}

// foreignABI makes calls through the other ABIs of x86_64, each in a
// forked child: a filter kills the caller. x32 calls carry the x86_64 audit
// arch with bit 30 set in the number; i386 calls come through int 0x80.
func foreignABI(r results, _ *config) {
	var params [120]byte
	for _, c := range []struct {
		name       string
		nr, a1, a2 uintptr
	}{
		{"socket(AF_VSOCK)", unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM},
		{"socketpair(AF_VSOCK)", unix.SYS_SOCKETPAIR, unix.AF_VSOCK, unix.SOCK_STREAM},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, 1, ptr(&params)},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER, ^uintptr(0), 0},
		{"io_uring_register", unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0},
	} {
		r["x32 "+c.name] = forked(gateSyscall, c.nr|x32, c.a1, c.a2)
	}
	const i386Getpid = 20
	r["i386 int 0x80 getpid"] = forked(gateInt80, i386Getpid)
}

var newFlags = []struct {
	name  string
	flag  uintptr
	clone bool // also a clone(2) flag: CLONE_NEWTIME is CSIGNAL's there
}{
	{"CLONE_NEWNS", unix.CLONE_NEWNS, true},
	{"CLONE_NEWCGROUP", unix.CLONE_NEWCGROUP, true},
	{"CLONE_NEWUTS", unix.CLONE_NEWUTS, true},
	{"CLONE_NEWIPC", unix.CLONE_NEWIPC, true},
	{"CLONE_NEWUSER", unix.CLONE_NEWUSER, true},
	{"CLONE_NEWPID", unix.CLONE_NEWPID, true},
	{"CLONE_NEWNET", unix.CLONE_NEWNET, true},
	{"CLONE_NEWTIME", unix.CLONE_NEWTIME, false},
}

// namespaces tries to make new namespaces, each in a forked child: unshare
// needs a single-threaded caller for some of them, and changes it for good.
func namespaces(r results, _ *config) {
	for _, f := range newFlags {
		r["unshare("+f.name+")"] = forked(gateSyscall, unix.SYS_UNSHARE, f.flag)
		if f.clone {
			r["clone("+f.name+")"] = forked(gateSyscall, unix.SYS_CLONE, f.flag|uintptr(unix.SIGCHLD))
		}
	}
	// clone3 with no arguments: the kernel answers EINVAL, a filter ENOSYS.
	_, r["clone3"] = call(unix.SYS_CLONE3, 0, 0)
	fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		r["setns(net)"] = "open: " + errName(err)
		return
	}
	defer unix.Close(fd)
	r["setns(net)"] = forked(gateSyscall, unix.SYS_SETNS, uintptr(fd), unix.CLONE_NEWNET)
}

func keyrings(r results, _ *config) {
	_, r["keyctl"] = call(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, int32ToUintptr(unix.KEY_SPEC_PROCESS_KEYRING), 1)
	typ, desc, payload := cstr("user"), cstr("wsh-attack"), []byte("x")
	_, r["add_key"] = call(unix.SYS_ADD_KEY, ptr(typ), ptr(desc), ptr(&payload[0]), 1, int32ToUintptr(unix.KEY_SPEC_PROCESS_KEYRING))
	// No callout: a NULL callout_info never starts /sbin/request-key.
	absent := cstr("wsh-attack-absent")
	_, r["request_key"] = call(unix.SYS_REQUEST_KEY, ptr(typ), ptr(absent), 0, 0)
}

func int32ToUintptr(v int) uintptr { return uintptr(int64(v)) }

func kernelSurfaces(r results, cfg *config) {
	var mapAttr [72]uint32 // union bpf_attr, BPF_MAP_CREATE: an array of one u32
	mapAttr[0], mapAttr[1], mapAttr[2], mapAttr[3] = unix.BPF_MAP_TYPE_ARRAY, 4, 4, 1
	r["bpf(BPF_MAP_CREATE)"] = callClose(unix.SYS_BPF, unix.BPF_MAP_CREATE, ptr(&mapAttr), unsafe.Sizeof(mapAttr))
	r["bpf(unknown command)"] = callClose(unix.SYS_BPF, 9999, 0, 0)
	// Counting this task's own user-space time, which perf_event_paranoid=2
	// allows.
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	r["perf_event_open"] = callClose(unix.SYS_PERF_EVENT_OPEN, ptr(&attr), 0, ^uintptr(0), ^uintptr(0), unix.PERF_FLAG_FD_CLOEXEC)
	const uffdUserModeOnly = 1
	r["userfaultfd"] = callClose(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly)
	_, r["kexec_load"] = call(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0)
	_, r["kexec_file_load"] = call(unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 0, 0, 0)
	empty := cstr("")
	_, r["init_module"] = call(unix.SYS_INIT_MODULE, 0, 0, ptr(empty))
	_, r["finit_module"] = call(unix.SYS_FINIT_MODULE, ^uintptr(0), ptr(empty), 0)
	_, r["delete_module"] = call(unix.SYS_DELETE_MODULE, ptr(cstr("wsh_attack_absent")), unix.O_NONBLOCK)
	fileHandles(r, cfg.handles)
}

// fileHandles asks for a handle of dir and opens it again by that handle
// (O_DIRECTORY: the kernel's condition for doing it without
// CAP_DAC_READ_SEARCH). Without a handle, a made-up one: a filter answers
// before the kernel reads it.
func fileHandles(r results, dir string) {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, dir, 0)
	r["name_to_handle_at"] = errName(err)
	if err != nil {
		h = unix.NewFileHandle(1, make([]byte, 8))
	}
	mnt, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		r["open_by_handle_at"] = "open: " + errName(err)
		return
	}
	defer unix.Close(mnt)
	fd, err := unix.OpenByHandleAt(mnt, h, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	r["open_by_handle_at"] = errName(err)
}

// mountTmpfs mounts a tmpfs on ./wsh-attack-handles, before any filter:
// its superblock then belongs to this user namespace, where
// open_by_handle_at of a directory needs no capability of the host. For
// throwaway namespaces only; a filter that refuses umount2 leaves the
// directory behind, in the caller's working directory.
func mountTmpfs() (string, func()) {
	dir, err := filepath.Abs("wsh-attack-handles")
	if err == nil {
		err = os.Mkdir(dir, 0o700)
	}
	if err != nil {
		fail("-tmpfs: %v", err)
	}
	if err := unix.Mount("wsh-attack", dir, "tmpfs", 0, ""); err != nil {
		fail("-tmpfs: mount: %v", err)
	}
	return dir, func() {
		if unix.Unmount(dir, unix.MNT_DETACH) == nil {
			os.Remove(dir)
		}
	}
}
