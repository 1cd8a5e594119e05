package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
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

// A versionReport is what wsh version --json prints; its field names are
// stable, and Schema changes when one changes meaning or goes away.
type versionReport struct {
	Schema  int    `json:"schema"`
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	// Modules are the versions of the modules wsh is built from that
	// matter to its behaviour (mvdan.cc/sh/v3, libseccomp-golang).
	Modules map[string]string `json:"modules"`
	// Libseccomp is the C library's version, "" where the jail is not
	// in this build.
	Libseccomp string `json:"libseccomp"`
	// JailInit says which jail init this wsh starts.
	JailInit string `json:"jail_init"`
	// Rung is what would confine commands here, with this environment:
	// full, landlock, seccomp or none (wsh doctor's rung, from the same
	// probe jail), and Why says what decided it.
	Rung string `json:"rung"`
	Why  string `json:"rung_why"`
}

const versionSchema = 1

func printVersion(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	for _, a := range args {
		if a != "--json" {
			fmt.Fprintf(stderr, "wsh version: %s: unknown argument\nusage: wsh version [--json]\n", a)
			return 2
		}
		asJSON = true
	}
	r := versionReport{Schema: versionSchema, Version: stamped(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Modules: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "mvdan.cc/sh/v3", "github.com/seccomp/libseccomp-golang":
				r.Modules[d.Path] = d.Version
			}
		}
	}
	r.Libseccomp, r.JailInit = jailVersion()
	r.Rung, r.Why = hostRung()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
		return 0
	}
	fmt.Fprintf(stdout, "wsh %s\n", r.Version)
	fmt.Fprintf(stdout, "go: %s %s/%s\n", r.Go, r.OS, r.Arch)
	for _, m := range []string{"mvdan.cc/sh/v3", "github.com/seccomp/libseccomp-golang"} {
		if v, ok := r.Modules[m]; ok {
			fmt.Fprintf(stdout, "%s: %s\n", m, v)
		}
	}
	if r.Libseccomp != "" {
		fmt.Fprintf(stdout, "libseccomp: %s\n", r.Libseccomp)
	}
	fmt.Fprintf(stdout, "jail init: %s\n", r.JailInit)
	fmt.Fprintf(stdout, "rung: %s (%s)\n", r.Rung, r.Why)
	return 0
}
