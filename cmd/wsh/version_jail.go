//go:build linux && cgo

package main

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"

	"wsh/internal/launch"
)

// jailVersion is the version of libseccomp and which jail init this wsh
// starts.
func jailVersion() (libseccompVersion, jailInit string) {
	major, minor, micro := libseccomp.GetLibraryVersion()
	return fmt.Sprintf("%d.%d.%d", major, minor, micro), launch.InitDescription()
}
