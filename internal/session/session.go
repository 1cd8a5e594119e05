//go:build linux && cgo

package session

import (
	"context"
	"sync"

	"wsh/degrade"
	"wsh/internal/gitmediate"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A Jail is the Runner's one jail (WSH_JAIL=session): made once,
// with the hidden paths and the protection as they were then, and every
// command of the Runner forked inside it, as long as that still is what a
// jail of the command's own would be. A command for which it is not (a
// hidden path appeared or moved, a repository appeared where the command
// works) gets a jail of its own, made now, and wsh says why, once.
type Jail struct {
	s         *launch.Session
	rung      degrade.Rung
	endBridge func() // ends its way to the proxy, or nil
	dir       string // the working directory it was made for (the start directory)
	// hidden is what the hidden paths were when the session's jail
	// covered them (hiddenPrint), and on the landlock rung how the
	// directories above them stood (grantedPrint).
	hidden string
	// pins and paths are the protection the jail was made with, and
	// what was bound in it since (ProtectInPlace); under mu.
	pins, paths map[proto.PathID]bool
	// git, on the full rung, answers the jail's renames (package gitmediate):
	// a config protected later is given to it with AddConfigs.
	git       *gitmediate.Mediator
	protectMu sync.Mutex // one ProtectInPlace at a time

	mu      sync.Mutex
	ended   bool // the session's jail is gone: commands get their own
	renewed bool // ended by Renew, which made another
	running int  // commands sent to it that have not ended
	retired bool // a lower rung's, made anew: closed once running is 0

	closeOnce sync.Once
	closeErr  error
}

// Record is what a jail of its own on rung, made for dir, was made with:
// print is Sessions.Print then, prot its protection (nil off the full
// rung). Stale and Unprotected judge it as a session's.
func Record(rung degrade.Rung, dir, print string, prot *protect.Protection) *Jail {
	sj := &Jail{rung: rung, dir: dir, hidden: print}
	if prot != nil {
		sj.pins, sj.paths = idSet(prot.Pins), idSet(prot.Paths)
	}
	return sj
}

func idSet(ids []proto.PathID) map[proto.PathID]bool {
	m := make(map[proto.PathID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// Rung is the rung the jail was made on.
func (sj *Jail) Rung() degrade.Rung { return sj.rung }

// Dir is the working directory the jail was made for.
func (sj *Jail) Dir() string { return sj.dir }

// Live says that the session's jail has not ended, as wsh and its init know.
func (sj *Jail) Live() bool { return !sj.isEnded() && !sj.s.Ended() }

// Run runs c in the session's jail, as launch.Session.Run.
func (sj *Jail) Run(ctx context.Context, c *launch.Command) degrade.Facts {
	return sj.s.Run(ctx, c)
}

// isEnded says that the session's jail is gone for later commands.
func (sj *Jail) isEnded() bool {
	sj.mu.Lock()
	defer sj.mu.Unlock()
	return sj.ended
}

// done is a command's end in sj: a retired session's last closes it.
func (sj *Jail) done() {
	sj.mu.Lock()
	sj.running--
	last := sj.retired && sj.running == 0
	sj.mu.Unlock()
	if last {
		sj.close()
	}
}

// retire ends sj for later commands, and closes it now if nothing runs
// in it, or else when the last command that does ends.
func (sj *Jail) retire() {
	sj.mu.Lock()
	sj.ended, sj.retired = true, true
	idle := sj.running == 0
	sj.mu.Unlock()
	if idle {
		sj.close()
	}
}

func (sj *Jail) end() {
	sj.mu.Lock()
	sj.ended = true
	sj.mu.Unlock()
}

// Stale says why the session's jail is not what a jail made now would be
// for prot and the hidden paths as they are now (hidden: Sessions.Print;
// "" when it is).
func (sj *Jail) Stale(prot *protect.Protection, hidden string) string {
	if hidden != sj.hidden {
		if sj.rung == degrade.RungLandlock {
			return "a hidden or writable path, or a directory above a hidden path, changed since the session's jail was made"
		}
		return "a hidden path changed since the session's jail was made"
	}
	if sj.rung != degrade.RungFull {
		// The protected paths are not the jail's to keep on a lower
		// rung (they are watched, per command).
		return ""
	}
	if p := sj.Unprotected(prot); p != "" {
		return "a protected path appeared since the session's jail was made (" + p + ")"
	}
	return ""
}

// Unprotected is a path of prot that the session's jail does not protect
// ("" when there is none).
func (sj *Jail) Unprotected(prot *protect.Protection) string {
	sj.mu.Lock()
	defer sj.mu.Unlock()
	for _, id := range prot.Pins {
		if !sj.pins[id] {
			return id.Path
		}
	}
	for _, id := range prot.Paths {
		if !sj.paths[id] {
			return id.Path
		}
	}
	return ""
}

// endedByUs says that the session was ended by Renew.
func (sj *Jail) endedByUs() bool {
	sj.mu.Lock()
	defer sj.mu.Unlock()
	return sj.renewed
}

// close ends the session: every process of its jail is killed.
func (sj *Jail) close() error {
	sj.end()
	sj.closeOnce.Do(func() {
		sj.closeErr = sj.s.Close()
		if sj.endBridge != nil {
			sj.endBridge()
		}
	})
	return sj.closeErr
}
