//go:build linux && cgo

package wrap_test

import (
	"os"
	"testing"

	"wsh/jail"
)

func TestMain(m *testing.M) {
	jail.Init()
	os.Exit(m.Run())
}
