//go:build !linux

package jail

// Init does nothing where there is no jail.
func Init() { initCalled.Store(true) }
