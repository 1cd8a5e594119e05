//go:build linux && cgo

package confine_test

import (
	"os"
	"testing"

	"wsh/jail"
)

// TestMain does what every program that embeds wsh does: the jail is this
// binary re-executed, so jail.Init comes first.
func TestMain(m *testing.M) {
	jail.Init()
	os.Exit(m.Run())
}
