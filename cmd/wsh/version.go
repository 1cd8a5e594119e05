package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	seccomp "github.com/seccomp/libseccomp-golang"

	"wsh/wrap"
)

// version is set at build time with -ldflags '-X main.version=...'.
var version = "0.1.0-dev"

func printVersion(w io.Writer) int {
	fmt.Fprintf(w, "wsh %s\n", version)
	fmt.Fprintf(w, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "mvdan.cc/sh/v3", "github.com/seccomp/libseccomp-golang":
				fmt.Fprintf(w, "%s: %s\n", d.Path, d.Version)
			}
		}
	}
	major, minor, micro := seccomp.GetLibraryVersion()
	fmt.Fprintf(w, "libseccomp: %d.%d.%d\n", major, minor, micro)
	fmt.Fprintf(w, "jail init: %s\n", wrap.InitDescription())
	return 0
}
