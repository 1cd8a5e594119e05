//go:build linux && cgo && !wshinit

package launch

// embeddedInit is empty in a build without the wshinit tag: the jail init
// is this binary itself, which must call jail.Init first in main.
var embeddedInit []byte

func checkEmbeddedInit() error { return nil }
