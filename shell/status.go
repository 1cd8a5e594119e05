package shell

import (
	"wsh/degrade"
	"wsh/internal/proto"
)

// DefaultKillTimeout is how long a cancelled command has between SIGTERM and
// SIGKILL.
const DefaultKillTimeout = proto.DefaultKillTimeout

// ErrNoInit is New's error for a program that did not call jail.Init first
// in main (a test binary: in TestMain). New returns it at once, before any
// process is started.
var ErrNoInit = proto.ErrNoInit

// ErrNotSupported is the cause where wsh has no jail: not Linux, or a wsh
// built without cgo. With WSH_REQUIRE_SANDBOX, New returns an error that is
// it (errors.Is); otherwise the Runner is Degraded with it as the cause.
var ErrNotSupported = degrade.ErrNotSupported

// Mode, Status and JailError are package degrade's: what is in force.
type (
	Mode      = degrade.Mode
	Status    = degrade.Status
	JailError = degrade.JailError
)

// The modes (degrade.Mode).
const (
	Confined = degrade.Confined
	Degraded = degrade.Degraded
	Refusing = degrade.Refusing
	OptedOut = degrade.OptedOut
)
