//go:build linux && cgo

package confine

import (
	"context"
	"io/fs"
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
		// The shell's file access is made after the builtins: asked
		// for when used.
		Refuse:     func(ctx context.Context, name string) error { return j.files.Refuse(ctx, name) },
		StatFollow: func(ctx context.Context, p string) (fs.FileInfo, error) { return j.files.StatFollow(ctx, p) },
		Resolve:    func(ctx context.Context, p string) (string, error) { return j.files.Resolve(ctx, p) },
		AccessError: func(ctx context.Context, name string, err error) error {
			return j.files.AccessError(ctx, name, err)
		},
	})
}
