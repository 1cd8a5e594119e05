// Command wsh-jail-init is the jail init alone: what wsh executes, in fresh
// namespaces, for every jailed command. It is built without cgo and
// embedded in wsh (go generate ./wrap, then go build -tags wshinit), so a
// jail starts without libc's start-up or the rest of wsh. It is not meant
// to be run by hand.
//
// The init reads no cgroup files to size GOMAXPROCS (Go 1.25's default):
// that is work at every jail's start, for a process that needs no
// parallelism of its own.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"fmt"
	"os"

	"wsh/jail"
)

func main() {
	jail.Init() // does not return when this is a jail init
	fmt.Fprintln(os.Stderr, "wsh-jail-init: wsh runs this as the init of a jail; it is not a command")
	os.Exit(2)
}
