package degrade

import (
	"fmt"
	"syscall"
)

// Facts are what the parent saw of one launch of a jail init: no verdict.
// What they mean (ran, refused by the host, failed, not executable) is
// Classify's call, and only its.
type Facts struct {
	// Rung is the rung the launch was of.
	Rung Rung
	// StartErr is the error of starting the jail init (the clone, the id
	// maps, the exec of the init itself); when it is set, only StartStep,
	// NamespacesAllowed and Filtered are.
	StartErr error
	// StartStep is the part of the start that failed.
	StartStep StartStep
	// NamespacesAllowed: the start failed with EPERM or EACCES and a plain
	// clone with the same namespaces and id maps, tried then, was allowed.
	NamespacesAllowed bool
	// Filtered: the start failed with EPERM or EACCES and wsh itself runs
	// under a seccomp filter (its /proc/self/status says Seccomp: 2), as
	// in another wsh's jail or a container.
	Filtered bool
	// Report is what the init wrote on the sentinel pipe, or nil.
	Report *Report
	// Status is the init's exit status, the target's own when there is no
	// report (128+N for a signal N).
	Status int
}

// A StartStep is a part of starting a jail init, before its exec: the
// steps of the spawn's child.
type StartStep uint8

// The parts of a start, in the order the spawn's child runs them
// (StartUnknown: the part is not known); String names each as a message
// does.
const (
	StartUnknown StartStep = iota
	StartClone
	StartSignals
	StartSetsid
	StartSetgroups
	StartUIDMap
	StartGIDMap
	StartPdeathsig
	StartCaps
	StartFiles
	StartExec
	StartArguments
	startStepCount
)

var startStepNames = [startStepCount]string{
	StartUnknown:   "start",
	StartClone:     "clone",
	StartSignals:   "signal dispositions",
	StartSetsid:    "setsid",
	StartSetgroups: "write /proc/self/setgroups",
	StartUIDMap:    "write /proc/self/uid_map",
	StartGIDMap:    "write /proc/self/gid_map",
	StartPdeathsig: "prctl(PR_SET_PDEATHSIG)",
	StartCaps:      "ambient capabilities",
	StartFiles:     "descriptors",
	StartExec:      "execve",
	StartArguments: "arguments",
}

// String is what the start step did, as a message names it ("clone",
// "write /proc/self/uid_map", "execve", ...).
func (s StartStep) String() string {
	if s < startStepCount {
		return startStepNames[s]
	}
	return fmt.Sprintf("StartStep(%d)", int(s))
}

// A Report is what a jail init says when a setup step fails before the
// command runs (mode 2): the step and its errno.
type Report struct {
	Step  Step
	Errno syscall.Errno
}
