package initproc

import "sync/atomic"

// initCalled is set by Init: the program called it, as it must before it
// makes a jail (the init is the program itself, re-executed).
var initCalled atomic.Bool

// Initialized reports whether this program called Init. A program that
// did not would, re-executed as a jail's init, run its own main again in
// the jail instead of the init; shell refuses to make jails for it.
func Initialized() bool { return initCalled.Load() }
