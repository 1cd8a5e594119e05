package degrade

import (
	"syscall"
)

// StepDown says, from the verdict of a probe jail of rung r, whether the
// Runner steps down to the next rung, and to which: the full jail refused
// by the host (a denial) steps down to the landlock rung; the landlock
// rung steps down to the seccomp rung when Landlock is absent (ENOSYS, as
// in gVisor or an old kernel), off (EOPNOTSUPP), or refused (EPERM or
// EACCES: a container profile from before Landlock); the seccomp
// rung steps down to none when it is refused. Anything else is no step:
// the rung is in force (Ran), or it failed loudly (Failed).
func StepDown(r Rung, v Verdict) (Rung, bool) {
	switch r {
	case RungFull:
		if v.Kind == Denied {
			return RungLandlock, true
		}
	case RungLandlock:
		if v.Kind == Denied || v.Kind == Failed && v.Step == StepLandlock && (landlockAbsent(v.Errno) || isDenial(v.Errno)) {
			return RungSeccomp, true
		}
	case RungSeccomp:
		if v.Kind == Denied {
			return RungNone, true
		}
	}
	return r, false
}

func landlockAbsent(errno syscall.Errno) bool {
	return errno == syscall.ENOSYS || errno == syscall.EOPNOTSUPP
}
