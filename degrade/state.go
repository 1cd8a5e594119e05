package degrade

import (
	"fmt"
	"sync"
)

// State remembers, for one Runner, that the host refused the jail. It is
// sticky: once degraded, later commands run unsandboxed without another
// attempt. It is safe for concurrent use.
type State struct {
	mu      sync.Mutex
	verdict *Verdict
}

// Degraded returns the denial that degraded this state, if any.
func (s *State) Degraded() (Verdict, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verdict == nil {
		return Verdict{}, false
	}
	return *s.verdict, true
}

// Record remembers a denial. It reports whether it is the first, so that
// exactly one warning is printed however many commands race to it.
func (s *State) Record(v Verdict) (first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.verdict != nil {
		return false
	}
	s.verdict = &v
	return true
}

// Warning is the one line printed on the first denial.
func Warning(v Verdict) string {
	return fmt.Sprintf("wsh: warning: %s; running commands unsandboxed from now on "+
		"(builtins and redirections still obey the write and hide policy). "+
		"Set WSH_NO_SANDBOX=1 to opt out without this warning, or WSH_REQUIRE_SANDBOX=1 to fail instead.", v.Message())
}
