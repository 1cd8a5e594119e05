package main

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/seccomp"
)

// setuidBinary is a setuid-root program of the host that waits for input
// ("Current password:") long enough to be read back.
const setuidBinary = "/usr/bin/passwd"

// setuid starts the setuid-root binary and reads its credentials back from
// /proc/PID/status once it has been exec'd: "euid=N capeff=X".
func setuid(r results, _ *config) {
	cmd := exec.Command(setuidBinary)
	stdin, err := cmd.StdinPipe() // never written: it waits
	if err != nil {
		fail("%v", err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		r["setuid "+setuidBinary] = "start: " + errName(err)
		return
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	status := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(status)
		if err != nil {
			break
		}
		if statusField(string(b), "Name") == "passwd" {
			uids := strings.Fields(statusField(string(b), "Uid"))
			r["setuid "+setuidBinary] = "euid=" + uids[1] + " capeff=" + statusField(string(b), "CapEff")
			return
		}
	}
	r["setuid "+setuidBinary] = "not read back"
}

// ptrace traces and reads other processes: the host's (by pid), the jail's
// init (pid 1: non-dumpable), and a child of its own. Only inside the jail.
func ptrace(r results, cfg *config) {
	if !cfg.ptrace {
		return
	}
	if cfg.hostPID != 0 {
		r["ptrace(PTRACE_ATTACH, host pid)"] = attach(cfg.hostPID)
		r["process_vm_readv(host pid)"] = readMem(cfg.hostPID)
	}
	r["ptrace(PTRACE_ATTACH, 1)"] = attach(cfg.init)
	r["process_vm_readv(1)"] = readMem(cfg.init)
	r["process_vm_readv(self)"] = readMem(os.Getpid())
	child := exec.Command("/bin/sleep", "60")
	if err := child.Start(); err != nil {
		fail("%v", err)
	}
	r["ptrace(PTRACE_ATTACH, own child)"] = attach(child.Process.Pid)
	child.Process.Kill()
	child.Wait()
}

// attach attaches to pid, waits for it to stop and detaches.
func attach(pid int) string {
	// A tracer is a thread (ptrace(2)): attach, wait and detach from one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return errName(err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		return "wait: " + errName(err)
	}
	return errName(unix.PtraceDetach(pid))
}

// readMem reads one word at the address of a local variable from pid.
func readMem(pid int) string {
	var src, dst uint64
	local := []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&dst)), Len: 8}}
	remote := []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&src)), Len: 8}}
	_, err := unix.ProcessVMReadv(pid, local, remote, 0)
	return errName(err)
}

// loadFilter loads wsh's seccomp filter without the groups in skip, with
// no_new_privs (libseccomp's default), on every thread (TSYNC).
func loadFilter(skip []string) {
	for _, s := range skip {
		known := false
		for _, g := range seccomp.Policy() {
			known = known || g.Name == s
		}
		if !known {
			fail("-skip %s: no such group in seccomp.Policy", s)
		}
	}
	// The full jail's filter: the lower rungs' groups are not in it.
	f, err := seccomp.BuildFilter(append(skip, proto.LowerRungGroups()...)...)
	if err != nil {
		fail("%v", err)
	}
	defer f.Release()
	if err := f.Load(); err != nil {
		fail("loading the filter: %v", err)
	}
}
