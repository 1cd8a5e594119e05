//go:build linux && cgo

package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A Command is a command for the session's jail.
type Command struct {
	// Name is the command's name as the script gave it, for messages.
	Name string
	// Launch is the command as launch.Session.Run takes it, its Dir the
	// working directory as the jail resolves it; Run sets its Umask.
	Launch launch.Command
	// Umask is the mask of the shell the command is of.
	Umask func() (uint32, error)
}

// Run runs c in the session's jail on rung, if it still is what c's own
// jail would be; ok is false when c is to get a jail of its own.
func (ss *Sessions) Run(ctx context.Context, rung degrade.Rung, c *Command) (out degrade.Facts, err error, ok bool) {
	sj := ss.current.Load()
	if sj == nil || sj.rung != rung {
		return out, nil, false
	}
	lc := c.Launch
	if sj.rung == degrade.RungLandlock && onTerminal(lc.Stdin, lc.Stdout, lc.Stderr) {
		// The zygote's Landlock domain grants no terminal (its streams
		// are /dev/null), and a domain in force takes no new rule: a
		// command that opens its terminal by path (/dev/stdout) gets a
		// jail of its own, which grants it.
		return out, nil, false
	}
	protectionOf := func(d string) (protect.Protection, bool) {
		prot, perr := ss.protector.Protection(d, sj.rung == degrade.RungFull)
		if perr != nil {
			// As in a command's own jail: no jail rather than one that
			// leaves a protected path writable.
			fmt.Fprintf(lc.Stderr, "wsh: %s: %v\n", c.Name, perr)
		} else if sj.rung == degrade.RungFull {
			ss.core.NoteConfigs(&prot)
		}
		return prot, perr == nil
	}
	prot, good := protectionOf(lc.Dir)
	if !good {
		return out, interp.ExitStatus(126), true
	}
	sj, choice := ss.sessionFor(ctx, sj, lc.Dir, &prot, protectionOf)
	switch choice {
	case ownJail:
		return out, nil, false
	case refused:
		return out, interp.ExitStatus(126), true
	}
	sj.mu.Lock()
	ended := sj.ended
	if !ended {
		sj.running++
	}
	sj.mu.Unlock()
	if ended {
		return out, nil, false
	}
	defer sj.done()
	umask, uerr := c.Umask()
	if uerr != nil {
		fmt.Fprintf(lc.Stderr, "wsh: %s: %v\n", c.Name, uerr)
		return out, interp.ExitStatus(126), true
	}
	if sj.rung != degrade.RungFull {
		// No mounts to keep the protected paths read-only: wsh says
		// after the command which changed, as for a jail of its own.
		prot.TakeStamps()
	}
	ss.core.WatchProtection(&prot, true)
	lc.Umask = umask
	facts := sj.s.Run(ctx, &lc)
	ss.core.WatchProtection(&prot, false)
	return ss.ran(ctx, sj, c, facts)
}

// ran is Run's outcome of c, sent to sj, whose launch said facts.
func (ss *Sessions) ran(ctx context.Context, sj *Jail, c *Command, facts degrade.Facts) (out degrade.Facts, err error, ok bool) {
	switch {
	case ctx.Err() != nil:
	case errors.Is(facts.StartErr, launch.ErrSessionEnded):
		// The jail is gone (its init was killed from outside, or made
		// stale and ended by another command): this command was not
		// sent; it gets a jail of its own.
		if !sj.endedByUs() {
			sj.end()
			ss.core.SayOnce("wsh: the session's jail has ended; later commands get a jail of their own")
		}
		return out, nil, false
	case errors.Is(facts.StartErr, launch.ErrSessionLost):
		// It may have run in part: not run again.
		if ss.closed.Load() {
			// Runner.Close ended the session, and every process of it,
			// as the command was sent or had just started (a job left
			// running): nothing to say, as for a job killed at Close.
			return out, interp.ExitStatus(proto.SignalStatus(syscall.SIGKILL)), true
		}
		if sj.endedByUs() {
			// Ended by another command's Renew as this one was
			// sent: it did not start, or was killed with the session.
			fmt.Fprintf(c.Launch.Stderr, "wsh: %s: the session's jail was made anew as it started; it did not run\n", c.Name)
			return out, interp.ExitStatus(126), true
		}
		sj.end()
		fmt.Fprintf(c.Launch.Stderr, "wsh: %s: %v; later commands get a jail of their own\n", c.Name, facts.StartErr)
		return out, interp.ExitStatus(126), true
	}
	return facts, nil, true
}

// What sessionFor decided for a command.
const (
	inSession = iota // it runs in the session returned
	ownJail          // it gets a jail of its own
	refused          // it does not run (126): said
)

// sessionFor brings the session's jail up to date for a command that
// works in dir with the protection prot, when it is stale: it binds the
// protected paths that appeared in the live jail (ProtectInPlace), or,
// when that cannot be done, ends it and makes another (Renew),
// whose protection for dir it puts in prot. protectionOf finds a
// directory's protection, and says why it cannot.
func (ss *Sessions) sessionFor(ctx context.Context, sj *Jail, dir string, prot *protect.Protection, protectionOf func(string) (protect.Protection, bool)) (*Jail, int) {
	hidden := ss.Print(sj.rung)
	why := sj.Stale(prot, hidden)
	if why == "" {
		return sj, inSession
	}
	// Stale for the session's own directory (a hidden path changed,
	// a repository or a protected path appeared there), or only for
	// this command's, which works elsewhere?
	own, good := *prot, true
	if dir != sj.dir {
		if own, good = protectionOf(sj.dir); !good {
			return sj, refused
		}
	}
	ownWhy := sj.Stale(&own, hidden)
	if ownWhy != "" && sj.Protectable(hidden) {
		// Only protected paths appeared: bound read-only in the live
		// jail, what runs in it runs on.
		if err := ss.ProtectInPlace(ctx, sj, &own); err != nil {
			ownWhy += "; it could not be protected in the session's jail (" + err.Error() + ")"
		} else {
			ownWhy = ""
			if sj.Stale(prot, hidden) == "" {
				return sj, inSession
			}
		}
	}
	if ownWhy == "" {
		// Elsewhere: the session's jail is what it was made to be,
		// and this command gets what a jail per command gives it.
		ss.core.SayOnce(fmt.Sprintf("wsh: commands in %s get a jail of their own: the session's jail, made for %s, does not protect %s; they do not share the session's processes and network",
			dir, sj.dir, sj.Unprotected(prot)))
		return sj, ownJail
	}
	// What runs in the session's jail has its view, which a jail
	// made now would not give: it ends with it, and a new one is
	// made for this command and the next.
	if sj = ss.Renew(sj, ownWhy); sj == nil {
		return nil, ownJail
	}
	if *prot, good = protectionOf(dir); !good {
		return sj, refused
	}
	if why := sj.Stale(prot, ss.Print(sj.rung)); why != "" {
		// Changing as fast as sessions are made: this one gets a
		// jail of its own.
		return sj, ownJail
	}
	return sj, inSession
}

// onTerminal says that one of streams is a terminal.
func onTerminal(streams ...any) bool {
	for _, s := range streams {
		if f, ok := s.(*os.File); ok {
			if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
				return true
			}
		}
	}
	return false
}
