//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// dieOf ends wsh by sig, as a shell does whose script a signal ended:
// its parent sees it killed by the signal (status 128+N in a shell), and
// a shell running wsh in a loop stops on the Ctrl-C as it would have if
// the loop's body had been its own. Deferred functions have run: the
// Runner is closed. If the signal does not kill (ignored, blocked), the
// caller exits with 128+N.
func dieOf(sig syscall.Signal) {
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	time.Sleep(100 * time.Millisecond) // delivered at once, to this thread or another
}
