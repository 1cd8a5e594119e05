package verdict

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
	worked  bool // a jail was made in this Runner
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

// JailWorked records that a jail was made in this Runner (its target
// started), before the command's verdict is known.
func (s *State) JailWorked() {
	s.mu.Lock()
	s.worked = true
	s.mu.Unlock()
}

// Settle decides what a verdict means in this Runner and remembers it. A
// denial after a jail was made in this Runner is not the host refusing
// the jail: the host allowed it, and what changed since is a command's
// doing (a path made inaccessible, the wsh binary's mode). It fails loudly
// instead of degrading. The first denial is remembered; Warn says who
// prints the one warning.
func (s *State) Settle(v Verdict) Verdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case v.Kind == Ran || v.Kind == NotExecutable:
		s.worked = true
	case v.Kind == Denied && s.worked:
		v.Kind, v.Note = Failed, "the jail worked earlier in this session, so this is not the host refusing it"
	case v.Kind == Denied && s.verdict == nil:
		s.verdict = &v
	}
	return v
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

// Warning is the one line printed on the first denial.
func Warning(v Verdict) string {
	return fmt.Sprintf("wsh: warning: %s; running commands unsandboxed from now on "+
		"(builtins and redirections still obey the write and hide policy). "+
		"Set WSH_NO_SANDBOX=1 to opt out without this warning, or WSH_REQUIRE_SANDBOX=1 to fail instead.", v.Message())
}
