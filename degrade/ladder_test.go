package degrade

import (
	"syscall"
	"testing"
)

// TestStepDown is the ladder's table: what each rung's probe verdict means.
func TestStepDown(t *testing.T) {
	rep := func(s Step, e syscall.Errno) Facts {
		return Facts{Report: &Report{Step: s, Errno: e}}
	}
	lower := func(r Rung, f Facts) Facts { f.Rung = r; return f }
	tests := []struct {
		name string
		rung Rung
		in   Facts
		want Rung
		down bool
	}{
		{"full made", RungFull, Facts{}, RungFull, false},
		{"full: clone EPERM", RungFull, Facts{StartErr: startErr(syscall.EPERM)}, RungLandlock, true},
		{"full: mount EACCES", RungFull, rep(StepMountPrivate, syscall.EACCES), RungLandlock, true},
		{"full: ENOSPC is loud", RungFull, Facts{StartErr: startErr(syscall.ENOSPC)}, RungFull, false},
		{"full: the home never steps down", RungFull, rep(StepHome, syscall.EPERM), RungFull, false},
		{"landlock made", RungLandlock, lower(RungLandlock, Facts{}), RungLandlock, false},
		{"landlock: ENOSYS (gVisor)", RungLandlock, lower(RungLandlock, rep(StepLandlock, syscall.ENOSYS)), RungSeccomp, true},
		{"landlock: off at boot", RungLandlock, lower(RungLandlock, rep(StepLandlock, syscall.EOPNOTSUPP)), RungSeccomp, true},
		{"landlock: refused by a profile", RungLandlock, lower(RungLandlock, rep(StepLandlock, syscall.EPERM)), RungSeccomp, true},
		{"landlock: a path's EIO is loud", RungLandlock, lower(RungLandlock, rep(StepLandlock, syscall.EIO)), RungLandlock, false},
		{"landlock: the start's EPERM is loud", RungLandlock, lower(RungLandlock, Facts{StartErr: startErr(syscall.EPERM)}), RungLandlock, false},
		{"seccomp made", RungSeccomp, lower(RungSeccomp, Facts{}), RungSeccomp, false},
		{"seccomp: refused", RungSeccomp, lower(RungSeccomp, rep(StepSeccomp, syscall.EACCES)), RungNone, true},
		{"seccomp: EINVAL is loud", RungSeccomp, lower(RungSeccomp, rep(StepSeccomp, syscall.EINVAL)), RungSeccomp, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, down := StepDown(tt.rung, Classify(tt.in))
			if got != tt.want || down != tt.down {
				t.Errorf("StepDown(%s, %+v) = %s, %v; want %s, %v", tt.rung, Classify(tt.in), got, down, tt.want, tt.down)
			}
		})
	}
}
