// Command wsh is a shell in which every external command runs in a Linux
// namespace jail.
package main

import (
	"os"

	"wsh/jail"
)

func main() {
	jail.Init() // first: this binary is also the jail init
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
