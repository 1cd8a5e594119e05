//go:build !linux || !cgo

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"wsh/config"
	"wsh/shell"
)

// doctor, where this build has no jail: it says so, and what commands
// would do (docs/doctor.md's statuses and verdicts).
func doctor(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	for _, a := range args {
		if a != "--json" {
			fmt.Fprintf(stderr, "wsh doctor: %s: unknown argument\nusage: wsh doctor [--json]\n", a)
			return 2
		}
		asJSON = true
	}
	rep := struct {
		Schema  int    `json:"schema"`
		Verdict string `json:"verdict"`
		Status  int    `json:"status"`
		Reason  string `json:"reason"`
	}{Schema: 1}
	cfg, err := config.Load(os.Environ())
	_, jailInit := jailVersion()
	switch {
	case err != nil:
		rep.Verdict, rep.Status, rep.Reason = "config-error", 2, err.Error()
	case cfg.NoSandbox:
		rep.Verdict, rep.Status, rep.Reason = "opted-out", 5, "WSH_NO_SANDBOX is set: commands run unsandboxed; the jail would not work here either ("+jailInit+")"
	case cfg.RequireSandbox != config.FloorNone:
		rep.Verdict, rep.Status, rep.Reason = "required-unavailable", 3, "WSH_REQUIRE_SANDBOX is set and the jail cannot be made, so wsh refuses to run: "+shell.ErrNotSupported.Error()+" ("+jailInit+")"
	default:
		rep.Verdict, rep.Status, rep.Reason = "would-degrade", 1, "commands would run unsandboxed after one warning: "+shell.ErrNotSupported.Error()+" ("+jailInit+")"
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		fmt.Fprintf(stdout, "verdict: %s (exit %d)\n  %s\n", rep.Verdict, rep.Status, rep.Reason)
	}
	return rep.Status
}

// hostRung: this build has no jail, so commands would run unsandboxed.
func hostRung() (rung, why string) {
	return "none", "this build has no jail (it needs Linux and cgo)"
}

// home: there is no jail, so no home of the jail's.
func home(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "wsh home: this build has no jail, so no copy-on-write home (it needs Linux and cgo)")
	return 2
}
