//go:build wshinit

package wrap

import _ "embed"

// embeddedInit is cmd/wsh-jail-init, built without cgo by go generate.
//
//go:embed initbin/wsh-jail-init
var embeddedInit []byte
