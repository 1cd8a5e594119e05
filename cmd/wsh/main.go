// Command wsh is a shell in which every external command runs in a Linux
// namespace jail.
package main

import (
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"wsh/jail"
)

func main() {
	jail.Init() // first: this binary is also the jail init
	// Nothing of wsh logs through the standard logger; net/http does,
	// for what a server the proxy reached sends unasked ("Unsolicited
	// response received on idle HTTP channel"), which would go to the
	// script's stderr as if wsh said it.
	log.SetOutput(io.Discard)
	status, sig := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if sig != 0 {
		dieOf(sig)
	}
	os.Exit(status)
}

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
