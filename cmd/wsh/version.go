package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	seccomp "github.com/seccomp/libseccomp-golang"

	"wsh/internal/launch"
)

// version is set at build time with -ldflags '-X main.version=...'.
var version = "0.1.0-dev"

// stamped is the version with the commit the build says it was made
// from, where the version is not a release's: 0.1.0-dev+1a2b3c4d5e6f, with
// -dirty for a tree with changes.
func stamped() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || strings.Contains(version, "+") { // scripts/build.sh stamped it
		return version
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return version + "+" + rev
}

func printVersion(w io.Writer) int {
	fmt.Fprintf(w, "wsh %s\n", stamped())
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
	fmt.Fprintf(w, "jail init: %s\n", launch.InitDescription())
	return 0
}
