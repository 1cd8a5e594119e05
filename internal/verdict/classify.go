package verdict

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// A Report is what the jail init said before the target ran: the step that
// failed and its errno.
type Report struct {
	Step  string
	Errno syscall.Errno
}

// An Outcome is what the parent saw of one jailed command.
type Outcome struct {
	// StartErr is the error of starting the jail init (clone, the id maps,
	// the exec of wsh itself); when it is set nothing else is.
	StartErr error
	// StartStep names the part of the start that failed, when it was not
	// the clone itself (the uid map write, the exec of the init, ...).
	StartStep string
	// Report is the report on the sentinel pipe, or nil.
	Report *Report
	// ExecStep is the name of the step whose report means the target could
	// not be executed, rather than that the jail was refused.
	ExecStep string
	// Note explains the report, when the jail has something to say.
	Note string
	// NotHost says a start refused with EPERM or EACCES was checked: the
	// host allowed the namespaces, so it is not a denial.
	NotHost bool
	// PathStep says the reported step resolves a user's path (a writable
	// or hidden path, the working directory): EACCES there is the file's
	// permission, not the host refusing the jail.
	PathStep bool
	// NeverDenial says no errno of the reported step is a denial: the
	// step is not one the host can refuse the jail with (the home).
	NeverDenial bool
	// Status is the jail init's exit status (the target's own when there is
	// no report).
	Status int
}

// Kind says what an outcome means.
type Kind int

const (
	// Ran: the target ran in the jail; Status is its status.
	Ran Kind = iota
	// Denied: the host refused the jail with EPERM or EACCES.
	Denied
	// Failed: the jail could not be made for another reason.
	Failed
	// NotExecutable: the jail was made but exec of the target failed.
	NotExecutable
)

func (k Kind) String() string {
	switch k {
	case Ran:
		return "ran"
	case Denied:
		return "denied"
	case Failed:
		return "failed"
	case NotExecutable:
		return "not executable"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// A Verdict is what Classify decided.
type Verdict struct {
	Kind Kind
	// Mode is 1 when the clone or the id maps were refused (the jail init
	// never ran), 2 when a setup step inside it was.
	Mode int
	// Step names where it failed: "clone" in mode 1, the setup step in mode 2.
	Step  string
	Errno syscall.Errno
	// Err is the start error, for Failed in mode 1.
	Err    error
	Status int
	// Note says why a refusal is not a denial, when that is not obvious.
	Note string
}

// StepClone names mode 1's step: starting the jail init in new namespaces.
const StepClone = "clone"

// Classify implements the table in DESIGN.md, "Classification".
func Classify(o Outcome) Verdict {
	if o.StartErr != nil {
		var errno syscall.Errno
		errors.As(o.StartErr, &errno)
		kind := Failed
		if isDenial(errno) && !o.NotHost {
			kind = Denied
		}
		note := o.Note
		if o.StartStep != "" && o.StartStep != StepClone {
			note = strings.TrimPrefix(note+"; at "+o.StartStep, "; ")
		}
		return Verdict{Kind: kind, Mode: 1, Step: StepClone, Errno: errno, Err: o.StartErr, Note: note}
	}
	if o.Report == nil {
		return Verdict{Kind: Ran, Status: o.Status}
	}
	v := Verdict{Mode: 2, Step: o.Report.Step, Errno: o.Report.Errno, Kind: Failed, Note: o.Note}
	switch {
	case o.Report.Step == o.ExecStep:
		v.Kind, v.Mode = NotExecutable, 0
	case o.NeverDenial:
	case o.PathStep && o.Report.Errno == syscall.EACCES:
		v.Note = "a path of the jail is not accessible"
	case isDenial(o.Report.Errno):
		v.Kind = Denied
	}
	return v
}

func isDenial(errno syscall.Errno) bool {
	return errno == syscall.EPERM || errno == syscall.EACCES
}

// Reason is the one-line text for a Denied or Failed verdict, without the
// "wsh: " prefix and without advice to a person: what a program reads.
func (v Verdict) Reason() string {
	what := v.Errno.Error()
	if v.Errno == 0 && v.Err != nil {
		what = v.Err.Error()
	}
	msg := fmt.Sprintf("jail: %s: %s", v.Step, what)
	if v.Note != "" {
		msg += " (" + v.Note + ")"
	}
	if v.Kind == Denied {
		return fmt.Sprintf("%s (mode %d: the host refuses the jail)", msg, v.Mode)
	}
	if v.Mode == 1 {
		switch v.Errno {
		case syscall.ENOSPC:
			msg += ": the user namespace limit is reached (sysctl user.max_user_namespaces) or namespaces are nested too deep"
		case syscall.EINVAL:
			msg += ": this kernel has no user namespaces"
		}
	}
	return msg
}

// Message is Reason with, for a failure, the advice to run wsh doctor: the
// text a person reads on a command's stderr.
func (v Verdict) Message() string {
	if v.Kind == Denied {
		return v.Reason()
	}
	return v.Reason() + "; run 'wsh doctor'"
}
