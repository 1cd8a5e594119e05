package degrade

import "syscall"

// A Step is one named stage of the jail's setup. The name is what a report,
// a warning and wsh doctor print.
type Step uint8

// The setup steps, in the order Init runs them. StepExec is not setup: it is
// the exec of the target, reported so the parent can tell "not executable"
// from a refused jail.
const (
	StepNone Step = iota
	StepParent
	StepMountPrivate
	StepDetach
	StepRootReadonly
	StepRun
	StepHome
	StepWritable
	StepProtect
	StepHide
	StepProc
	StepSys
	StepDev
	StepStdio
	StepLoopback
	StepChdir
	StepDescriptors
	StepCapabilities
	StepNoNewPrivs
	StepLandlock
	StepSeccomp
	StepExec
	// The home's keeper's steps (KeeperArg0), reported the same way.
	StepKeeperLock
	StepKeeperMount
	StepKeeperListen
	// StepListener is a lower rung's session's filter loaded with a
	// listener (SECCOMP_FILTER_FLAG_NEW_LISTENER): a kernel without it,
	// or a filter above with a listener of its own, refuses it. The rung
	// stands; its commands get an init of their own.
	StepListener
	stepCount
)

// Reported says whether s is a step an init reports: one of the setup
// steps, not StepNone nor StepClone.
func (s Step) Reported() bool { return s != StepNone && s < stepCount }

var stepNames = [stepCount]string{
	StepNone:         "none",
	StepParent:       "parent",
	StepMountPrivate: "mount-private",
	StepDetach:       "detach",
	StepRootReadonly: "root-readonly",
	StepRun:          "run",
	StepHome:         "home",
	StepWritable:     "writable",
	StepProtect:      "protect",
	StepHide:         "hide",
	StepProc:         "proc",
	StepSys:          "sys",
	StepDev:          "dev",
	StepStdio:        "stdio",
	StepLoopback:     "loopback",
	StepChdir:        "chdir",
	StepDescriptors:  "descriptors",
	StepCapabilities: "capabilities",
	StepNoNewPrivs:   "no-new-privs",
	StepLandlock:     "landlock",
	StepSeccomp:      "seccomp",
	StepExec:         "exec",
	StepKeeperLock:   "keeper-lock",
	StepKeeperMount:  "keeper-mount",
	StepKeeperListen: "keeper-listen",
	StepListener:     "seccomp-listener",
}

// StepClone is no step of the init's: it names, in a verdict, the start
// of the init (mode 1). No report carries it.
const StepClone Step = 0xff

// String is the step's name, as a report, a warning and wsh doctor print
// it.
func (s Step) String() string {
	if s == StepClone {
		return "clone"
	}
	if s < stepCount {
		return stepNames[s]
	}
	return "unknown"
}

// ErrStream is the errno with which StepStdio fails for a standard stream
// the jail cannot show (a file or device of the host): give it through a
// pipe.
const ErrStream = syscall.EXDEV
