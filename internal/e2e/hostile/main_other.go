//go:build !linux || !cgo

package main

import (
	"fmt"
	"os"
)

// The harness needs the jail's host: Linux, and libseccomp through cgo.
func main() {
	fmt.Fprintln(os.Stderr, "hostile: the hostile-host harness needs Linux and cgo")
	os.Exit(2)
}
