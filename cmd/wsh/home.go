//go:build linux && cgo

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"wsh/config"
	"wsh/internal/launch"
	"wsh/internal/paths"
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
		plan, why, err = paths.HomePlan(cfg, dir, os.Environ())
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
	if why == "" {
		fmt.Fprintf(w, "The jail's $HOME is copy-on-write: jailed commands read %s as it is,\n"+
			"and what they write to it is kept in wsh's state directory, not on the host:\n"+
			"in a layer of each project's own, but for the caches, which every project shares.\n", plan.Home)
	} else {
		fmt.Fprintf(w, "The jail's $HOME is not copy-on-write here: %s.\n", why)
	}
	fmt.Fprintf(w, "  home:   %s\n", plan.Home)
	for _, l := range launch.Layers(plan) {
		info := launch.InspectHome(l)
		if l.Project == "" && why != "" && !info.Existed {
			continue // nothing kept, and nothing to keep
		}
		printLayer(w, l, info, l.Project != "" && l.Project == plan.Project && l.Scope == plan.Scope)
	}
	fmt.Fprintf(w, "wsh home reset empties every layer.\n")
}

// printLayer shows one layer of the home: the shared one (the caches) or
// a project's.
func printLayer(w io.Writer, l launch.HomePlan, info launch.HomeInfo, here bool) {
	switch {
	case l.Project == "":
		fmt.Fprintf(w, "  shared layer (the caches: %s):\n", strings.Join(launch.SharedCaches, ", "))
	case here:
		fmt.Fprintf(w, "  project %s (this one):\n", l.Project)
	default:
		fmt.Fprintf(w, "  project %s:\n", l.Project)
	}
	if l.Scope != "" {
		fmt.Fprintf(w, "    scope:  %s\n", l.Scope)
	}
	fmt.Fprintf(w, "    kept:   %s\n", l.Upper())
	if info.Existed {
		fmt.Fprintf(w, "    size:   %s\n", humanBytes(info.Size))
	} else {
		fmt.Fprintf(w, "    size:   nothing kept yet\n")
	}
	keeper := "not running"
	if info.Keeper {
		keeper = "running"
	}
	fmt.Fprintf(w, "    keeper: %s\n", keeper)
	if len(info.Earlier) > 0 {
		fmt.Fprintf(w, "    also:   %s: written by jails before wsh kept a layer per project; no jail sees it now\n",
			strings.Join(info.Earlier, ", "))
	}
}

// homeReset empties every layer of the home: the projects' first, whose
// keepers hold the shared layer's, then the shared one.
func homeReset(plan launch.HomePlan, stdout, stderr io.Writer) int {
	layers := launch.Layers(plan)
	status := 0
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		name := "the shared layer (the caches)"
		if l.Project != "" {
			name = "the layer of project " + l.Project
		}
		freed, err := resetLayer(l, i == 0)
		switch {
		case errors.Is(err, launch.ErrHomeInUse):
			fmt.Fprintf(stderr, "wsh home reset: %s: %v; stop it and try again\n", name, err)
			status = 1
		case err != nil:
			fmt.Fprintf(stderr, "wsh home reset: %s: %v\n", name, err)
			status = 1
		default:
			fmt.Fprintf(stdout, "wsh home reset: emptied %s of %s (%s freed)\n", name, plan.Home, humanBytes(freed))
		}
	}
	return status
}

// resetLayer resets one layer. The shared layer's keeper may not yet
// have seen the projects' keepers, just asked to end, go: it is asked
// again for a moment.
func resetLayer(l launch.HomePlan, shared bool) (int64, error) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		freed, err := launch.ResetHome(l)
		if !shared || !errors.Is(err, launch.ErrHomeInUse) || time.Now().After(deadline) {
			return freed, err
		}
		time.Sleep(50 * time.Millisecond)
	}
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
