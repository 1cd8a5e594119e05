package config

import "fmt"

// A GroundError is a path wsh was to make writable (the start directory,
// $TMPDIR or a WSH_WRITABLE path) that it refuses to start on: it is
// reached through a symlink a jailed command could have made, or it is
// where the host finds programs to run. wsh exits 126 on it, as on a jail
// that cannot be made: no command runs.
type GroundError struct {
	What string // "the start directory", "TMPDIR", "WSH_WRITABLE"
	Path string // as given
	Why  string // the symlink or the directory, and the rule
}

func (e *GroundError) Error() string {
	return fmt.Sprintf("refusing to start: %s %s %s", e.What, e.Path, e.Why)
}
