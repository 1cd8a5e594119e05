// Command wsh is a shell in which every external command runs in a Linux
// namespace jail.
package main

import (
	"io"
	"log"
	"os"

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
