package verdict

import (
	"fmt"
	"sync"
)

// State is what one Runner learned of the host's jail. It is sticky: once
// degraded, later commands run unsandboxed without another attempt. It is
// safe for concurrent use.
type State struct {
	// RequireSandbox: a denial fails the command closed (Refused) rather
	// than degrading.
	RequireSandbox bool

	mu      sync.Mutex
	verdict *Verdict // the denial that degraded
	refused *Verdict // the last denial, with RequireSandbox
	failed  *Verdict // the last failure
	worked  bool     // a jail was made, or failed for another reason
	warned  bool
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
// degrading. With RequireSandbox a denial is Refused; otherwise the first
// denial degrades the state, and Warn says who prints the one warning.
func (s *State) Settle(v Verdict) Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case v.Kind == Denied && s.worked:
		v.Kind, v.Note = Failed, "the jail worked earlier in this session, so this is not the host refusing it"
	case v.Kind == Denied && s.RequireSandbox:
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

// Warning is the one line printed on the first denial.
func Warning(v Verdict) string {
	return fmt.Sprintf("wsh: warning: %s; running commands unsandboxed from now on "+
		"(builtins and redirections still obey the write and hide policy). "+
		"Set WSH_NO_SANDBOX=1 to opt out without this warning, or WSH_REQUIRE_SANDBOX=1 to fail instead.", v.Message())
}
