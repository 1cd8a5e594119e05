//go:build linux && cgo

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/confine"
	"wsh/internal/cowhome"
	"wsh/internal/initproc"
	"wsh/internal/proto"
	"wsh/internal/seccomp"
)

// Doctor's exit statuses (docs/doctor.md).
const (
	doctorConfined       = 0
	doctorWouldDegrade   = 1
	doctorConfigError    = 2
	doctorWouldFail      = 3
	doctorOptOutNeedless = 4 // WSH_NO_SANDBOX is set, but the jail works here
	doctorOptedOut       = 5 // WSH_NO_SANDBOX is set, and the jail would not work
)

// The verdicts, as --json prints them.
const (
	verdictConfined       = "confined"
	verdictWouldDegrade   = "would-degrade"
	verdictWouldFail      = "would-fail"
	verdictOptedOut       = "opted-out"
	verdictOptOutNeedless = "opted-out-jail-works"
	verdictRequired       = "required-unavailable"
	verdictConfigError    = "config-error"
)

// A doctorReport is everything doctor says; its JSON field names are stable.
type doctorReport struct {
	// Schema is the version of this layout: it changes when a field
	// changes meaning or goes away.
	Schema  int    `json:"schema"`
	Verdict string `json:"verdict"`
	// Rung is what would confine commands: full, landlock, seccomp or
	// none (docs/sandbox.md, "The ladder").
	Rung string `json:"rung"`
	// Rungs are the rungs tried, in order, with what came of each.
	Rungs    []rungResult    `json:"rungs"`
	Status   int             `json:"status"`
	Reason   string          `json:"reason"`
	Denial   *denial         `json:"denial,omitempty"`
	Steps    []stepResult    `json:"steps"`
	Readback *proto.Readback `json:"readback,omitempty"`
	Facts    facts           `json:"facts"`
	Config   *configView     `json:"config,omitempty"`
	Home     *homeView       `json:"home,omitempty"`
	Seccomp  []policyGroup   `json:"seccomp_policy"`
}

type rungResult struct {
	Rung   string `json:"rung"`
	Result string `json:"result"` // ok, denied, refused (Landlock absent or refused), failed
	Step   string `json:"step,omitempty"`
	Errno  string `json:"errno,omitempty"`
}

type denial struct {
	Mode  int    `json:"mode"`
	Step  string `json:"step"`
	Errno string `json:"errno"`
}

type stepResult struct {
	Step   string `json:"step"`
	Result string `json:"result"` // ok, denied, refused (Landlock absent or refused), failed, not-reached
	Errno  string `json:"errno,omitempty"`
}

type configView struct {
	NoSandbox      bool     `json:"no_sandbox"`
	RequireSandbox string   `json:"require_sandbox"` // the floor: "", full, landlock or seccomp
	Writable       []string `json:"writable"`
	Hidden         []string `json:"hidden"`
	UnixSockets    string   `json:"unix_sockets"`
	// UnixWithheld: WSH_UNIX_SOCKETS=allow is not in force on the rung
	// (a lower one, with WSH_HIDE set): socket(AF_UNIX) is refused.
	UnixWithheld bool   `json:"unix_sockets_withheld"`
	Network      string `json:"network"`
	// AllowHosts and DenyHosts are WSH_ALLOW_HOSTS and WSH_DENY_HOSTS,
	// normalised (WSH_NETWORK=proxy).
	AllowHosts []string `json:"allow_hosts"`
	DenyHosts  []string `json:"deny_hosts"`
	// Jail is WSH_JAIL (session or command); Session says that the
	// commands would share one jail (a session made on the full rung).
	Jail    string `json:"jail"`
	Session bool   `json:"session"`
}

// homeView is what the jail's $HOME is (docs/doctor.md).
type homeView struct {
	Mode  string `json:"mode"` // overlay, readonly
	Home  string `json:"home,omitempty"`
	State string `json:"state,omitempty"`
	Why   string `json:"why,omitempty"`
}

type policyGroup struct {
	Group   string   `json:"group"`
	Refuses []string `json:"refuses"`
}

func doctor(args []string, stdout, stderr io.Writer) int {
	asJSON := false
	for _, a := range args {
		if a != "--json" {
			fmt.Fprintf(stderr, "wsh doctor: %s: unknown argument\nusage: wsh doctor [--json]\n", a)
			return doctorConfigError
		}
		asJSON = true
	}
	rep := diagnose()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printDoctor(stdout, rep)
	}
	return rep.Status
}

// diagnose runs the probe jail and decides the verdict.
func diagnose() *doctorReport {
	rep := &doctorReport{Schema: doctorSchema, Facts: gatherFacts(), Seccomp: policySummary(), Steps: []stepResult{}, Rungs: []rungResult{}}
	cfg, err := config.Load(os.Environ())
	var j *confine.Jailer
	dir, derr := os.Getwd()
	if err == nil && derr != nil {
		err = derr
	}
	if err == nil {
		j, err = confine.NewJailer(cfg, dir, os.Environ(), io.Discard)
	}
	if err != nil {
		rep.Verdict, rep.Status, rep.Reason, rep.Rung = verdictConfigError, doctorConfigError, err.Error(), degrade.RungNone.String()
		return rep
	}
	defer j.Close()
	rep.Config = &configView{cfg.NoSandbox, string(cfg.RequireSandbox), orEmpty(j.Writable()), orEmpty(cfg.Hide), string(cfg.UnixSockets), false, string(cfg.Network), orEmpty(cfg.AllowHosts), orEmpty(cfg.DenyHosts), string(cfg.Jail), j.Session()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, rb, perr := j.Probe(ctx, dir)
	rep.Readback = rb
	rep.Home = homeReport(j.Home(), cfg)
	rep.Steps = stepResults(v)
	rep.Rung = j.Rung().String()
	rep.Config.UnixWithheld = j.UnixWithheld()
	for _, t := range j.Tried() {
		r := rungResult{Rung: t.Rung.String(), Result: "ok"}
		switch t.Verdict.Kind {
		case degrade.Ran, degrade.NotExecutable:
		case degrade.Denied, degrade.Refused:
			r.Result, r.Step, r.Errno = "denied", t.Verdict.Step.String(), errnoName(t.Verdict.Errno)
		default:
			r.Result, r.Step, r.Errno = "failed", t.Verdict.Step.String(), errnoName(t.Verdict.Errno)
			if _, down := degrade.StepDown(t.Rung, t.Verdict); down {
				r.Result = "refused" // absent or refused: a step down, as a denial is
			}
		}
		rep.Rungs = append(rep.Rungs, r)
	}
	if _, refused := j.Refused(); refused || cfg.NoSandbox {
		// Below WSH_REQUIRE_SANDBOX's floor no command runs; opted out,
		// none is confined.
		rep.Rung = degrade.RungNone.String()
	}
	judge(rep, cfg, v, rb, perr, j.HostNetwork())
	if sf, failed := j.StartFailure(); failed && rep.Verdict == verdictConfined {
		// The jail works, and wsh still does not start (WSH_HOME=cow
		// without a copy-on-write home).
		rep.Verdict, rep.Status = verdictWouldFail, doctorWouldFail
		rep.Reason = "wsh would not start, and every external command would fail with 126: " + sf.Reason()
	}
	if rep.Verdict == verdictRequired || rep.Verdict == verdictWouldFail {
		rep.Rung = degrade.RungNone.String() // no command would run
	}
	return rep
}

// hostRung is the rung commands would get on this host, with this
// environment, and doctor's reason for it: wsh version says it.
func hostRung() (rung, why string) {
	rep := diagnose()
	return rep.Rung, rep.Reason
}

// judge sets the verdict from what the probe jail showed.
func judge(rep *doctorReport, cfg config.Config, v degrade.Verdict, rb *proto.Readback, perr error, hostNet bool) {
	works, why := false, ""
	switch {
	case perr != nil:
		why = perr.Error()
	case v.Kind == degrade.Ran:
		works, why = rb.Confined(hostNet)
		if !works {
			why = "the jail was made but the kernel shows it is not in force: " + why
		}
	case v.Kind == degrade.NotExecutable:
		why = fmt.Sprintf("jail: exec: %v", v.Errno)
	default:
		why = v.Reason()
	}
	if v.Kind == degrade.Denied {
		rep.Denial = &denial{v.Mode, v.Step.String(), errnoName(v.Errno)}
	}
	switch {
	case cfg.NoSandbox && works:
		rep.Verdict, rep.Status = verdictOptOutNeedless, doctorOptOutNeedless
		rep.Reason = "WSH_NO_SANDBOX is set, but the jail works on this host: the opt-out is no longer needed here; remove it to confine commands"
	case cfg.NoSandbox:
		rep.Verdict, rep.Status = verdictOptedOut, doctorOptedOut
		rep.Reason = "WSH_NO_SANDBOX is set: commands run unsandboxed; the jail would not work here either (" + why + ")"
	case works:
		rep.Verdict, rep.Status, rep.Reason = verdictConfined, doctorConfined, "every external command runs in the jail"
	case cfg.RequireSandbox != config.FloorNone && rep.Rung == degrade.RungNone.String():
		// diagnose set the rung to none: below the floor (Jailer.Refused).
		rep.Verdict, rep.Status = verdictRequired, doctorWouldFail
		rep.Reason = "WSH_REQUIRE_SANDBOX is set and the jail cannot be made, so every external command fails with 126: " + why
	case v.Kind == degrade.Denied:
		rep.Verdict, rep.Status = verdictWouldDegrade, doctorWouldDegrade
		if rep.Rung != degrade.RungNone.String() {
			rep.Reason = "the host refuses the jail; commands would run on the " + rep.Rung + " rung after one warning: " + why
		} else {
			rep.Reason = "the host refuses the jail; commands would run unsandboxed after one warning: " + why
		}
	default:
		rep.Verdict, rep.Status = verdictWouldFail, doctorWouldFail
		rep.Reason = "every external command would fail with 126: " + why
	}
}

// stepResults lists the clone and every setup step with what happened.
func stepResults(v degrade.Verdict) []stepResult {
	steps := append([]degrade.Step{degrade.StepClone}, initproc.SetupSteps()...)
	failedAt, result := degrade.StepNone, ""
	switch v.Kind {
	case degrade.Denied:
		failedAt, result = v.Step, "denied"
	case degrade.Failed:
		failedAt, result = v.Step, "failed"
	}
	out := make([]stepResult, 0, len(steps))
	state := "ok"
	for _, n := range steps {
		r := stepResult{Step: n.String(), Result: state}
		if n == failedAt {
			r.Result, r.Errno, state = result, errnoName(v.Errno), "not-reached"
		}
		out = append(out, r)
	}
	return out
}

// doctorSchema is doctorReport.Schema (docs/doctor.md).
const doctorSchema = 1

// orEmpty is l, or an empty list: JSON's [] rather than null.
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func policySummary() []policyGroup {
	out := []policyGroup{}
	for _, g := range seccomp.Policy() {
		out = append(out, policyGroup{g.Name, orEmpty(g.Calls)})
	}
	return out
}

func errnoName(e syscall.Errno) string {
	if e == 0 {
		return ""
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}

func homeReport(h cowhome.Status, cfg config.Config) *homeView {
	if cfg.NoSandbox {
		return nil
	}
	v := &homeView{Mode: "readonly", Home: h.Home, State: h.State, Why: h.Why}
	if h.Overlay {
		v.Mode = "overlay"
	}
	return v
}
