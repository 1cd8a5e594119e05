package degrade

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

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
	// Refused: the host refused the jail and the configuration requires
	// one (WSH_REQUIRE_SANDBOX): the command fails closed. Only State
	// gives it.
	Refused
)

// String is the kind's name: "ran", "denied", "failed", "not executable"
// or "refused".
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
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// A Verdict is what Classify decided.
type Verdict struct {
	Kind Kind
	// Mode is 1 when the clone or the id maps were refused (the jail init
	// never ran), 2 when a setup step inside it was.
	Mode int
	// Step is where it failed: StepClone in mode 1, the setup step
	// in mode 2.
	Step  Step
	Errno syscall.Errno
	// Err is the start error, for Failed in mode 1.
	Err    error
	Status int
	// Note says why a refusal is not a denial, when that is not obvious.
	Note string
	// Filtered: in mode 1, wsh itself runs under a seccomp filter
	// (Facts.Filtered), the likely refuser.
	Filtered bool
}

// Classify says what the facts of one launch mean: the table in
// docs/sandbox.md, "When the host refuses the jail".
func Classify(f Facts) Verdict {
	if f.StartErr != nil {
		var errno syscall.Errno
		errors.As(f.StartErr, &errno)
		v := Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: errno, Err: f.StartErr, Filtered: f.Filtered}
		switch {
		case isDenial(errno) && f.Rung != RungFull && f.StartStep == StartSetsid:
			// A fresh child leads no process group: only a filter
			// refuses its setsid (an outer wsh's, on a lower rung), and
			// a lower rung needs the session to end what a command
			// leaves running. The host refuses the rung.
			v.Kind = Denied
		case isDenial(errno) && f.Rung != RungFull:
			// No namespaces were asked for: the host did not refuse a
			// jail, it refused the exec of wsh's init.
			v.Note = "no namespaces were asked for; the exec of wsh's own binary was refused"
		case isDenial(errno) && f.NamespacesAllowed:
			// The refusal was the exec of wsh's own binary (its mode
			// changed, say), which is no reason to run commands
			// unsandboxed.
			v.Note = "the namespaces were allowed; the exec of wsh's own binary was refused"
		case isDenial(errno):
			v.Kind = Denied
		}
		if f.StartStep != StartUnknown && f.StartStep != StartClone {
			v.Note = strings.TrimPrefix(v.Note+"; at "+f.StartStep.String(), "; ")
		}
		return v
	}
	if f.Report == nil {
		return Verdict{Kind: Ran, Status: f.Status}
	}
	r := *f.Report
	v := Verdict{Mode: 2, Step: r.Step, Errno: r.Errno, Kind: Failed, Note: note(r.Step, r.Errno)}
	switch {
	case r.Step == StepExec:
		v.Kind, v.Mode = NotExecutable, 0
	case neverDenial(r.Step):
	case resolvesPath(r.Step) && r.Errno == syscall.EACCES:
		v.Note = "a path of the jail is not accessible"
	case isDenial(r.Errno):
		v.Kind = Denied
	}
	return v
}

// resolvesPath reports whether the step resolves a path the user named (a
// writable or hidden path, the working directory), where EACCES is that
// path's permission rather than the host refusing the jail.
func resolvesPath(s Step) bool {
	switch s {
	case StepDetach, StepWritable, StepHide, StepChdir, StepHome, StepProtect:
		return true
	}
	return false
}

// neverDenial reports whether a failure of the step, whatever its errno,
// is no refusal of the jail by the host: the copy-on-write home is a
// convenience of the jail, and losing it must not switch the jail off;
// Landlock is a second layer under the namespaces.
func neverDenial(s Step) bool { return s == StepHome || s == StepLandlock }

// note says, for a failure of the step with errno, what it means when the
// errno alone does not say it.
func note(s Step, errno syscall.Errno) string {
	switch {
	case s == StepStdio && errno == ErrStream:
		return "a standard stream of the command is a file or device the jail cannot show; give it through a pipe"
	case s == StepHome && (errno == syscall.ENOTDIR || errno == syscall.EISDIR || errno == syscall.ESTALE):
		return "the home shows something else where a writable path or a host mount goes, as a command of " +
			"another wsh can leave it; wsh home reset clears what commands wrote to the home"
	}
	return ""
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
	if v.Kind == Denied || v.Kind == Refused {
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
	if v.Kind == Refused && v.Mode == 1 && v.Filtered {
		// No warning follows to give the likely cause.
		return v.Reason() + "; wsh itself runs under a seccomp filter (Seccomp: 2), as inside another wsh's jail"
	}
	if v.Kind == Denied || v.Kind == Refused {
		return v.Reason()
	}
	return v.Reason() + "; run 'wsh doctor'"
}
