package degrade

import (
	"fmt"
	"sync"
)

// State is what one Runner learned of the host's jail. It is sticky: once
// degraded, later commands run on the rung the Runner stepped down to
// (StepDown), without another attempt at the full jail. It is safe for
// concurrent use.
type State struct {
	mu      sync.Mutex
	floor   Rung // the lowest rung accepted, with floored
	floored bool
	verdict *Verdict // the denial that degraded
	refused *Verdict // the last denial, with the full jail as the floor
	failed  *Verdict // the last failure
	worked  bool     // a jail was made, or failed for another reason
	warned  bool
}

// SetFloor makes r the lowest rung this Runner accepts (WSH_REQUIRE_SANDBOX):
// with the full jail as the floor a denial fails the command closed
// (Refused) rather than degrading; with a lower one, Accepts says whether
// the rung the Runner stepped down to will do. Call it before Settle.
func (s *State) SetFloor(r Rung) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.floor, s.floored = r, true
}

// Accepts says whether commands may run on rung r: always without a
// floor, else when r is the floor or above it.
func (s *State) Accepts(r Rung) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.floored || r <= s.floor
}

// Warn reports true exactly once, the first time it is called after the
// state degraded: that caller prints the one warning.
func (s *State) Warn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verdict == nil || s.warned {
		return false
	}
	s.warned = true
	return true
}

// Settle decides what a verdict means in this Runner and remembers it; it
// is the one place that does. A jail made, or one that failed for another
// reason than a refusal, says the host allows the jail: a denial after
// that is not the host refusing it but a command's doing (a path made
// inaccessible, the wsh binary's mode), and fails loudly instead of
// degrading. With the full jail as the floor a denial is Refused; otherwise the first
// denial degrades the state, and Warn says who prints the one warning.
func (s *State) Settle(v Verdict) Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case v.Kind == Denied && s.worked:
		v.Kind, v.Note = Failed, "the jail worked earlier in this session, so this is not the host refusing it"
	case v.Kind == Denied && s.floored && s.floor == RungFull:
		v.Kind = Refused
	}
	switch v.Kind {
	case Denied:
		if s.verdict == nil {
			s.verdict = &v
		}
	case Refused:
		s.refused = &v
	case Failed:
		s.failed = &v
		s.worked = true
	default:
		// A jail made: whatever refused it before no longer does.
		s.worked, s.refused = true, nil
	}
	return v
}

// Degraded returns the denial that degraded this state, if any.
func (s *State) Degraded() (Verdict, bool) { return s.get(&s.verdict) }

// Refused returns the last denial that failed a command closed, if any.
func (s *State) Refused() (Verdict, bool) { return s.get(&s.refused) }

// Failed returns the last failure, if any.
func (s *State) Failed() (Verdict, bool) { return s.get(&s.failed) }

func (s *State) get(p **Verdict) (Verdict, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *p == nil {
		return Verdict{}, false
	}
	return **p, true
}

// Warning is the one warning of a Runner whose host refused the full jail
// (v, the first denial), which runs its commands on rung r from now on:
// what is in force, what is not, the likely cause, and wsh doctor. abi is
// the host's Landlock ABI (0: none); withheld are the settings asked for
// that the rung does not give, each with why. It never offers the opt-out as a way
// to silence it: the warning is the truth about this host.
func Warning(v Verdict, r Rung, abi int, withheld ...string) string {
	var in string
	switch r {
	case RungLandlock:
		in = "commands run on the landlock rung from now on: no capabilities, no_new_privs, wsh's seccomp filter, " +
			"and Landlock (writes only in the writable paths; no TCP, with WSH_NETWORK=none), but in the host's " +
			"namespaces: they see the host's processes and network, hidden paths can be listed though not read, " +
			"the home is read-only, the protected paths in the writable paths (git hooks and config, editor and " +
			"agent settings) are writable, and the mode, owner, times and extended attributes of any file this " +
			"user owns can be changed (Landlock does not cover them)"
		if abi < 6 {
			in += fmt.Sprintf(", and they can signal this user's other processes (Landlock ABI %d has no signal scope)", abi)
		}
		if abi < 3 {
			in += fmt.Sprintf(", and truncate any file this user can write (ABI %d)", abi)
		}
		in += "; builtins, redirections and globs are done under the same Landlock domain"
	case RungSeccomp:
		in = "commands run on the seccomp rung from now on: no capabilities, no_new_privs and wsh's seccomp filter, " +
			"but neither Landlock (this kernel or its host refuses it) nor namespaces: they can write wherever " +
			"this user can, read the hidden paths, change the protected paths, signal this user's other processes " +
			"and, where the kernel's ptrace policy (Yama) allows it, read and write their memory through /proc; " +
			"builtins, redirections and globs have no file policy either"
	case RungNone:
		if !v.Filtered {
			in = "running commands unsandboxed from now on (builtins, redirections and globs too)"
			break
		}
		// Under a filter wsh itself runs under (another wsh's jail),
		// which refused the lower rungs too.
		in = "running commands without a jail of wsh's own from now on (the lower rungs were refused too): they are confined " +
			"only by what confines wsh itself (the jail of the wsh that runs this one, if it is one), as are builtins, redirections and globs"
	default:
		in = "running commands unsandboxed from now on (builtins, redirections and globs too)"
	}
	for _, w := range withheld {
		in += "; " + w
	}
	return fmt.Sprintf("wsh: warning: %s; %s. %s. Run 'wsh doctor' for what this host allows; "+
		"set WSH_REQUIRE_SANDBOX=1 to fail instead.", v.Message(), in, cause(v))
}

// cause is the likely reason for a denial, from where it came.
func cause(v Verdict) string {
	switch {
	case v.Mode == 1 && v.Filtered:
		return "Likely cause: wsh itself runs under a seccomp filter that refuses user namespaces (its /proc/self/status says Seccomp: 2), " +
			"as inside another wsh's jail, whose commands are confined by that jail too, or under a container's default profile"
	case v.Mode == 1:
		return "Likely cause: a seccomp profile or policy refuses user namespaces (a container's default profile, or a sysctl)"
	case v.Step == StepMountPrivate || v.Step == StepDetach || v.Step == StepRootReadonly:
		return "Likely cause: user namespaces are allowed but mounts in them are not (AppArmor's unprivileged user namespace restriction, as on Ubuntu 24.04)"
	}
	return "Likely cause: the host refuses a step of the jail's setup"
}
