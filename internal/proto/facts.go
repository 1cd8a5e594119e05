package proto

import (
	"syscall"
)

// SignalStatus is the exit status of a process killed by sig, as a shell
// gives it: 128+N.
func SignalStatus(sig syscall.Signal) int { return 128 + int(sig) }

// WaitStatus is the exit status that ws gives: its code, or SignalStatus.
func WaitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return SignalStatus(ws.Signal())
	}
	return ws.ExitStatus()
}
