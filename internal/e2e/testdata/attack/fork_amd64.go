package main

import (
	"golang.org/x/sys/unix"
)

// x32 is the bit that makes an x86_64 system call number an x32 one.
const x32 = 0x40000000

// sigDefault is a struct sigaction of zeros: SIG_DFL, no flags, no mask.
var sigDefault [4]uint64

func rawForkCall(mode, nr, a1, a2, a3 uintptr) (pid int)

// The gates a forked call goes through.
const (
	gateSyscall = 0 // the x86_64 SYSCALL instruction (x32 numbers too)
	gateInt80   = 1 // int 0x80, the i386 ABI
)

// forked makes one system call in a forked child that runs no Go code, and
// returns "ok", the errno's name, or "killed:SIGNAL". It is for calls that
// may kill the caller (a foreign ABI) or change it for good (unshare).
func forked(gate, nr uintptr, args ...uintptr) string {
	var a [3]uintptr
	copy(a[:], args)
	pid := rawForkCall(gate, nr, a[0], a[1], a[2])
	if pid < 0 {
		return "fork:" + unix.ErrnoName(unix.Errno(-pid))
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			if err != nil {
				return "wait:" + unix.ErrnoName(err.(unix.Errno))
			}
			break
		}
	}
	switch {
	case ws.Signaled():
		return "killed:" + unix.SignalName(ws.Signal())
	case ws.ExitStatus() == 0:
		return "ok"
	default:
		return unix.ErrnoName(unix.Errno(ws.ExitStatus()))
	}
}
