//go:build linux && cgo

package session

import (
	"context"

	"wsh/degrade"
	"wsh/internal/gitmediate"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Core is what the sessions need of the Jailer that runs the Runner's
// commands.
type Core interface {
	// Request is the jail request of a command on rung working in dir,
	// with its protection pending until the init has asked for it.
	Request(rung degrade.Rung, dir string) (*launch.Request, Pending)
	// SessionFilter is the seccomp program of a lower rung's zygote.
	SessionFilter(rung degrade.Rung) ([]byte, error)
	// SplitFilter is the full rung's session's two programs: for every
	// thread of its init, and for the thread that forks the commands.
	SplitFilter() ([2][]byte, error)
	// AttachHome gives req the copy-on-write home; done is called once
	// the jail has it.
	AttachHome(req *launch.Request) (done func())
	// AttachProxy gives req its way to the proxy; end closes it once the
	// jail has ended.
	AttachProxy(req *launch.Request) (end func(), err error)
	// Probe makes a command's own jail on rung in dir, as decide's probe.
	Probe(ctx context.Context, dir string, rung degrade.Rung) degrade.Verdict
	// WatchProtection starts (running) or ends the watch of prot.
	WatchProtection(prot *protect.Protection, running bool)
	// NoteConfigs says the git configs of prot protected since the first jail.
	NoteConfigs(prot *protect.Protection)
	// WatchBound notes the stamps of paths just bound in a live session.
	WatchBound(paths []proto.PathID)
	// SayHooks says each hook in dir, a hooks directory just bound.
	SayHooks(dir string)
	// SayOnce says msg on the warning stream, once for each msg.
	SayOnce(msg string)
	// ResetFiles ends the shell's file server in sj, made anew.
	ResetFiles(sj *Jail)
}

// Pending is a request's protection, known once launch has run it.
type Pending interface {
	// Result is the protection found (nil if none was), the full rung's
	// git mediator, and why the protection could not be found.
	Result() (*protect.Protection, *gitmediate.Mediator, error)
}
