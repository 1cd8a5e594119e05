//go:build linux && cgo && wshinit

package launch

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
)

// embeddedInit is cmd/wsh-jail-init, built without cgo by go generate.
//
//go:embed initbin/wsh-jail-init
var embeddedInit []byte

// initSum is the SHA-256 of the init that scripts/build.sh generated just
// before it built this binary (-ldflags -X wsh/internal/launch.initSum=...).
var initSum string

// checkEmbeddedInit refuses an embedded init that scripts/build.sh did not
// generate for this build: nothing else ties internal/launch/initbin to the source, and
// an init built from an older tree would run every jail with older code.
func checkEmbeddedInit() error {
	if initSum == "" {
		return errors.New("this binary embeds a jail init (-tags wshinit) but was not built by scripts/build.sh, " +
			"which generates the init from the same source; build it with make build")
	}
	sum := sha256.Sum256(embeddedInit)
	if got := hex.EncodeToString(sum[:]); got != initSum {
		return fmt.Errorf("the embedded jail init (sha256 %s) is not the one scripts/build.sh generated (%s)", got, initSum)
	}
	return nil
}
