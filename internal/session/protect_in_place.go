//go:build linux && cgo

package session

import (
	"context"
	"time"

	"wsh/degrade"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Protectable says that the session's jail can be brought up to date in
// place, with hidden as the hidden paths are now (Sessions.Print): on the
// full rung, when they are as the jail covers them (a hidden path that
// changed needs a cover the live jail cannot be given without a command
// seeing the path in between, and is renewed), only protected paths can
// have appeared.
func (sj *Jail) Protectable(hidden string) bool {
	return sj.rung == degrade.RungFull && hidden == sj.hidden
}

// protectTimeout bounds the wait for the init's answer to a Protect.
const protectTimeout = 30 * time.Second

// ProtectInPlace has the session's init bind read-only, in its live jail,
// the paths of prot that it does not protect (and pin the directories
// above them), and adds them to what sj protects. wsh made the
// placeholders of the missing ones when it found prot, as for a jail made
// now. Between the moment a path appeared (git init made .git/hooks) and
// this bind, a command of the session (the one that ran git init, or a
// job running meanwhile) could write there: what it wrote stays, and a
// hook among it is said once the bind is made (Core.SayHooks). What a
// process that held a path open, or worked in it, writes after the bind
// is said after the command (Core.WatchBound). One at a
// time: a concurrent command waits, and then finds its paths protected.
func (ss *Sessions) ProtectInPlace(ctx context.Context, sj *Jail, prot *protect.Protection) error {
	sj.protectMu.Lock()
	defer sj.protectMu.Unlock()
	sj.mu.Lock()
	var pins, paths []proto.PathID
	for _, id := range prot.Pins {
		if !sj.pins[id] {
			pins = append(pins, id)
		}
	}
	for _, id := range prot.Paths {
		if !sj.paths[id] {
			paths = append(paths, id)
		}
	}
	sj.mu.Unlock()
	if len(pins) == 0 && len(paths) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), protectTimeout)
	defer cancel()
	if err := sj.s.Protect(ctx, pins, paths); err != nil {
		return err
	}
	sj.mu.Lock()
	for _, id := range pins {
		sj.pins[id] = true
	}
	for _, id := range paths {
		sj.paths[id] = true
	}
	sj.mu.Unlock()
	ss.core.WatchBound(paths)
	if sj.git != nil {
		// A new repository's config is written through wsh as the
		// others are (git remote add right after git init).
		sj.git.AddConfigs(append(append([]proto.PathID(nil), pins...), paths...))
	}
	for _, id := range paths {
		ss.core.SayHooks(id.Path)
	}
	return nil
}
