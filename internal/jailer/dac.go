//go:build linux && cgo

package jailer

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// dacCaps are the capabilities that override a file's permissions. A
// command in the jail holds none; root's wsh holds them all, so a
// redirection, which wsh opens in its own process, could write another
// user's file or make one in another user's private directory
// (/tmp/ssh-XXXX/) where no command of the run could.
var dacCaps = []uint{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER}

// asJail runs open as a command of the jail would be judged: on an OS
// thread of its own whose effective set lacks dacCaps, so that the
// kernel checks the file's permissions and the sticky bit as it does in
// the jail. Capabilities are per thread (capset(2) acts on the calling
// thread): the thread is locked to its goroutine, and given back to the
// runtime once its set is as it was; where that fails it stays locked,
// and ends with the goroutine, lowered set and all. (Ending a thread at
// each redirection had other goroutines lose theirs between an open of
// /proc/thread-self and its read: ESRCH.) A process without those
// capabilities runs open as it is.
func asJail(open func() (*os.File, error)) (*os.File, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return nil, os.NewSyscallError("capget", err)
	}
	held := false
	for _, c := range dacCaps {
		held = held || data[c/32].Effective&(1<<(c%32)) != 0
	}
	if !held {
		return open()
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // unlocked only with the set given back
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var was, data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &was[0]); err != nil {
			done <- result{nil, os.NewSyscallError("capget", err)}
			return
		}
		data = was
		for _, c := range dacCaps {
			data[c/32].Effective &^= 1 << (c % 32)
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			done <- result{nil, os.NewSyscallError("capset", err)}
			return
		}
		f, err := open()
		done <- result{f, err}
		if unix.Capset(&hdr, &was[0]) == nil {
			runtime.UnlockOSThread()
		}
	}()
	r := <-done
	return r.f, r.err
}
