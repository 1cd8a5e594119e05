//go:build linux && cgo

package jailer

import (
	"syscall"

	"wsh/internal/builtins"
)

// newBuiltins are wsh's builtins for the Jailer's interpreters, given
// what they need of it: its commands and the shell's file access.
func (j *Jailer) newBuiltins() *builtins.Set {
	return builtins.New(builtins.Core{
		External:     j.external,
		Signal:       func(id string, sig syscall.Signal) { j.running.signal(id, sig, false) },
		JailedFiles:  j.jailedFiles,
		RefusedFiles: j.refusedFiles,
		Refusal:      j.refusal,
		StatFollow:   j.statFollow,
		Resolve:      j.resolveIn,
		AccessError:  accessError,
	})
}
