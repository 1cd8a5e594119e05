//go:build linux && cgo

package confine

import "golang.org/x/sys/unix"

// landlockABI is the Landlock ABI of this kernel, or 0 where there is none
// (or it is refused): what the landlock rung's warning says it lacks.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}
