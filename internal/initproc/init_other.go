//go:build !linux

package initproc

// Init does nothing where there is no jail.
func Init() { initCalled.Store(true) }
