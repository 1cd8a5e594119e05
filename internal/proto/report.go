package proto

import (
	"encoding/binary"
	"syscall"
)

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

func (s Step) String() string {
	if s == StepClone {
		return "clone"
	}
	if s < stepCount {
		return stepNames[s]
	}
	return "unknown"
}

// ErrStream is the errno with which the stdio step fails for a stream the
// jail cannot show.
const ErrStream = syscall.EXDEV

// ReportFD is the descriptor on which the jail init finds the sentinel pipe.
const ReportFD = 3

// ReportSize is the size of one report on the sentinel pipe.
const ReportSize = 8

// ReservedStatus is the exit status of a jail init that wrote a report. It
// carries no meaning on its own: the parent decides from the report only,
// because a target may exit with any status.
const ReservedStatus = 125

var magic = [2]byte{'w', 0xa5}

// A Report is what a jail init writes on the sentinel pipe when a step fails
// before the target runs.
type Report struct {
	Step  Step
	Errno syscall.Errno
}

// Encode returns the report's fixed-size wire form.
func (r Report) Encode() [ReportSize]byte {
	var b [ReportSize]byte
	b[0], b[1] = magic[0], magic[1]
	b[2] = byte(r.Step)
	binary.LittleEndian.PutUint32(b[4:], uint32(r.Errno))
	return b
}

// DecodeReport parses one report. Anything that is not exactly one valid
// report (wrong size, magic, step or a zero errno) is not a report.
func DecodeReport(b []byte) (Report, bool) {
	if len(b) != ReportSize || b[0] != magic[0] || b[1] != magic[1] || b[3] != 0 {
		return Report{}, false
	}
	r := Report{Step: Step(b[2]), Errno: syscall.Errno(binary.LittleEndian.Uint32(b[4:]))}
	if r.Step == StepNone || r.Step >= stepCount || r.Errno == 0 {
		return Report{}, false
	}
	return r, true
}
