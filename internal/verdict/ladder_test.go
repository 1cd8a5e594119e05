package verdict

import (
	"syscall"
	"testing"

	"wsh/internal/proto"
)

// TestStepDown is the ladder's table: what each rung's probe verdict means.
func TestStepDown(t *testing.T) {
	rep := func(s proto.Step, e syscall.Errno) proto.Facts {
		return proto.Facts{Report: &proto.Report{Step: s, Errno: e}}
	}
	lower := func(r proto.Rung, f proto.Facts) proto.Facts { f.Rung = r; return f }
	tests := []struct {
		name string
		rung proto.Rung
		in   proto.Facts
		want proto.Rung
		down bool
	}{
		{"full made", proto.RungFull, proto.Facts{}, proto.RungFull, false},
		{"full: clone EPERM", proto.RungFull, proto.Facts{StartErr: startErr(syscall.EPERM)}, proto.RungLandlock, true},
		{"full: mount EACCES", proto.RungFull, rep(proto.StepMountPrivate, syscall.EACCES), proto.RungLandlock, true},
		{"full: ENOSPC is loud", proto.RungFull, proto.Facts{StartErr: startErr(syscall.ENOSPC)}, proto.RungFull, false},
		{"full: the home never steps down", proto.RungFull, rep(proto.StepHome, syscall.EPERM), proto.RungFull, false},
		{"landlock made", proto.RungLandlock, lower(proto.RungLandlock, proto.Facts{}), proto.RungLandlock, false},
		{"landlock: ENOSYS (gVisor)", proto.RungLandlock, lower(proto.RungLandlock, rep(proto.StepLandlock, syscall.ENOSYS)), proto.RungSeccomp, true},
		{"landlock: off at boot", proto.RungLandlock, lower(proto.RungLandlock, rep(proto.StepLandlock, syscall.EOPNOTSUPP)), proto.RungSeccomp, true},
		{"landlock: refused by a profile", proto.RungLandlock, lower(proto.RungLandlock, rep(proto.StepLandlock, syscall.EPERM)), proto.RungSeccomp, true},
		{"landlock: a path's EIO is loud", proto.RungLandlock, lower(proto.RungLandlock, rep(proto.StepLandlock, syscall.EIO)), proto.RungLandlock, false},
		{"landlock: the start's EPERM is loud", proto.RungLandlock, lower(proto.RungLandlock, proto.Facts{StartErr: startErr(syscall.EPERM)}), proto.RungLandlock, false},
		{"seccomp made", proto.RungSeccomp, lower(proto.RungSeccomp, proto.Facts{}), proto.RungSeccomp, false},
		{"seccomp: refused", proto.RungSeccomp, lower(proto.RungSeccomp, rep(proto.StepSeccomp, syscall.EACCES)), proto.RungNone, true},
		{"seccomp: EINVAL is loud", proto.RungSeccomp, lower(proto.RungSeccomp, rep(proto.StepSeccomp, syscall.EINVAL)), proto.RungSeccomp, false},
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
