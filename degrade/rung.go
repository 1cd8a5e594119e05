package degrade

import "fmt"

// A Rung is how much of the jail a command gets: the ladder wsh steps
// down when the host refuses a rung (docs/sandbox.md, "The ladder").
type Rung uint8

const (
	// RungFull is the whole jail: namespaces, mounts, covers, no
	// capabilities, no_new_privs, the seccomp filter.
	RungFull Rung = iota
	// RungLandlock is no namespace at all: no capabilities,
	// no_new_privs, the seccomp filter (with the network refused), and a
	// Landlock ruleset (write only in the writable paths, TCP refused,
	// signals and abstract sockets scoped).
	RungLandlock
	// RungSeccomp is RungLandlock without Landlock.
	RungSeccomp
	// RungNone is no confinement: commands run unsandboxed.
	RungNone
	rungCount
)

var rungNames = [rungCount]string{"full", "landlock", "seccomp", "none"}

// String is the rung's name: "full", "landlock", "seccomp" or "none".
func (r Rung) String() string {
	if r < rungCount {
		return rungNames[r]
	}
	return fmt.Sprintf("Rung(%d)", int(r))
}

// ParseRung is the rung named s, as WSH_REQUIRE_SANDBOX names a floor.
func ParseRung(s string) (Rung, bool) {
	for r, n := range rungNames {
		if n == s {
			return Rung(r), true
		}
	}
	return 0, false
}
