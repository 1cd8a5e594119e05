//go:build linux && cgo

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"wsh/config"
	"wsh/internal/jailer"
	"wsh/internal/launch"
)

const homeUsage = "usage: wsh home [reset]"

// home shows the jail's home (wsh home) or empties it (wsh home reset).
func home(args []string, stdout, stderr io.Writer) int {
	reset := false
	switch {
	case len(args) == 1 && args[0] == "reset":
		reset = true
	case len(args) > 0:
		fmt.Fprintf(stderr, "wsh home: %s: unknown argument\n%s\n", args[0], homeUsage)
		return 2
	}
	cfg, err := config.Load(os.Environ())
	dir, derr := os.Getwd()
	if err == nil && derr != nil {
		err = derr
	}
	var plan launch.HomePlan
	var why string
	if err == nil {
		plan, why, err = jailer.HomePlan(cfg, dir, os.Environ())
	}
	if err != nil {
		return configError(stderr, err)
	}
	switch {
	case plan.Home == "" && reset:
		fmt.Fprintf(stderr, "wsh home reset: the jail has no home of its own: %s\n", why)
		return 1
	case plan.Home == "":
		// Nothing to show: the jail's home is the host's path, read-only
		// (or absent), as every command is told.
		fmt.Fprintf(stdout, "The jail's $HOME is not copy-on-write here: %s.\n", why)
		return 0
	case reset:
		return homeReset(plan, stdout, stderr)
	}
	printHome(stdout, plan, why)
	return 0
}

func printHome(w io.Writer, plan launch.HomePlan, why string) {
	info := launch.InspectHome(plan)
	if why == "" {
		fmt.Fprintf(w, "The jail's $HOME is copy-on-write: jailed commands read %s as it is,\n"+
			"and what they write to it is kept in wsh's state directory, not on the host.\n", plan.Home)
	} else {
		fmt.Fprintf(w, "The jail's $HOME is not copy-on-write here: %s.\n", why)
	}
	fmt.Fprintf(w, "  home:   %s\n", plan.Home)
	if why != "" && !info.Existed {
		return // nothing kept, and nothing to keep
	}
	fmt.Fprintf(w, "  kept:   %s\n", plan.Upper())
	if info.Existed {
		fmt.Fprintf(w, "  size:   %s\n", humanBytes(info.Size))
	} else {
		fmt.Fprintf(w, "  size:   nothing kept yet\n")
	}
	keeper := "not running"
	if info.Keeper {
		keeper = "running"
	}
	fmt.Fprintf(w, "  keeper: %s\n", keeper)
	fmt.Fprintf(w, "wsh home reset empties it.\n")
}

func homeReset(plan launch.HomePlan, stdout, stderr io.Writer) int {
	freed, err := launch.ResetHome(plan)
	switch {
	case errors.Is(err, launch.ErrHomeInUse):
		fmt.Fprintf(stderr, "wsh home reset: %v; stop it and try again\n", err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "wsh home reset: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wsh home reset: emptied the jail's home of %s (%s freed)\n", plan.Home, humanBytes(freed))
	return 0
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
