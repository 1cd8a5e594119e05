// Command wsh-jail-init is the jail init alone: what wsh executes, in fresh
// namespaces, for every jailed command. It is built without cgo and
// embedded in wsh (go generate ./wrap, then go build -tags wshinit), so a
// jail starts without libc's start-up or the rest of wsh. It is not meant
// to be run by hand.
//
// The init does not re-read its cgroup's CPU limit in the background to
// resize GOMAXPROCS (Go 1.25's default): it needs no parallelism of its
// own. (The runtime still reads the cgroup files once at start, whatever
// the settings.)
//
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
