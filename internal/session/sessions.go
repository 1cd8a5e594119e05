//go:build linux && cgo

package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/paths"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// Sessions are a Runner's session's jail: the one in force (the one made
// in place of a stale one included), and the lower rungs' ones made anew
// whose commands run on.
type Sessions struct {
	core      Core
	hiding    *paths.Hiding // the Jailer's: what the jails cover
	shm       *proto.PathID // the Jailer's FIFO directory, set before any session
	protector *protect.Protector
	warn      io.Writer

	current atomic.Pointer[Jail]
	// closed is set by Close: no session is made after it.
	closed  atomic.Bool
	renewMu sync.Mutex // one new session at a time
	// retired are the lower rungs' sessions made anew (Renew),
	// whose commands run on until they end; Close ends them.
	retired   []*Jail
	retiredMu sync.Mutex // guards retired
}

// New returns the Sessions of a Jailer, none made yet: core is the
// Jailer, hiding and shm its hidden paths and FIFO directory as they
// stand when a session is made, warn its warning stream.
func New(core Core, hiding *paths.Hiding, shm *proto.PathID, protector *protect.Protector, warn io.Writer) *Sessions {
	return &Sessions{core: core, hiding: hiding, shm: shm, protector: protector, warn: warn}
}

// Current is the session's jail in force, or nil.
func (ss *Sessions) Current() *Jail { return ss.current.Load() }

// InForce says that the commands on rung share one jail: a session's
// jail on rung was made and has not ended.
func (ss *Sessions) InForce(rung degrade.Rung) bool {
	sj := ss.current.Load()
	if sj == nil || sj.rung != rung {
		return false
	}
	return !sj.isEnded()
}

// Start makes the session's jail on rung, the Runner's first
// there: it is the probe of the host on that rung (decide), and its
// verdict is what a command's jail would have had. A made session is kept
// as the one in force. On a lower rung the session is a zygote in the host's
// namespaces, under the rung's Landlock domain and filter, which forks
// every command.
func (ss *Sessions) Start(ctx context.Context, dir string, rung degrade.Rung) degrade.Verdict {
	hidden := ss.hiddenPrint()
	req, pp := ss.core.Request(rung, hostDir(dir))
	req.Spec.Session, req.Spec.Path, req.Spec.Args, req.Spec.Env = true, "", nil, nil
	if v, ok := ss.filter(ctx, req, dir, rung); !ok {
		return v
	}
	done := ss.core.AttachHome(req)
	endBridge, err := ss.core.AttachProxy(req)
	if err != nil {
		done()
		return degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepLoopback, Err: err}
	}
	s, facts := launch.StartSession(ctx, req)
	done()
	if s == nil {
		endBridge()
	}
	prot, git, perr := pp.Result()
	if prot != nil {
		ss.core.WatchProtection(prot, false)
	}
	if perr != nil {
		// As Probe: the protected paths cannot be known, which is no
		// verdict on the host; each command's own jail says why.
		return degrade.Verdict{}
	}
	v := degrade.Classify(facts)
	if s == nil {
		return ss.notStarted(ctx, dir, rung, v)
	}
	if rung == degrade.RungLandlock {
		// Taken now, after the setup made what it makes in the start
		// directory (the placeholders of missing protected paths). A
		// change missed between the zygote's grant and now leaves an
		// entry ungranted: less is reachable, never more.
		hidden += ss.grantedPrint()
	}
	sj := &Jail{s: s, rung: rung, endBridge: endBridge, git: git, dir: hostDir(dir), hidden: hidden, pins: idSet(prot.Pins), paths: idSet(prot.Paths)}
	ss.current.Store(sj)
	return v
}

// filter gives req the seccomp program of a session on rung; when it
// cannot, ok is false and v is Start's verdict.
func (ss *Sessions) filter(ctx context.Context, req *launch.Request, dir string, rung degrade.Rung) (v degrade.Verdict, ok bool) {
	if rung != degrade.RungFull {
		f, err := ss.core.SessionFilter(rung)
		if err != nil {
			// A libseccomp without SCMP_ACT_NOTIFY (before 2.5, or a
			// kernel it finds without it): the rung stands, without a
			// session; the probe of a command's own jail is still to
			// come, and says its own failures.
			ss.core.SayOnce(fmt.Sprintf("wsh: no session on the %s rung: its filter could not be made (%v); commands get an init of their own", rung, err))
			return ss.core.Probe(ctx, dir, rung), false
		}
		req.Spec.Filter = f
		return v, true
	}
	f, err := ss.core.SplitFilter()
	if err != nil {
		return degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepSeccomp, Err: err}, false
	}
	req.Spec.Filter, req.Spec.ForkFilter = f[0], f[1]
	return v, true
}

// notStarted is Start's verdict v on a session's jail that was not made.
func (ss *Sessions) notStarted(ctx context.Context, dir string, rung degrade.Rung, v degrade.Verdict) degrade.Verdict {
	if rung != degrade.RungFull && v.Step == degrade.StepListener {
		// Every step of the rung's setup held but the filter's listener:
		// a kernel before 5.7, or a filter in force with a listener of
		// its own (a supervisor that intercepts system calls). The rung
		// stands, without a session.
		ss.core.SayOnce(fmt.Sprintf("wsh: no session on the %s rung: the kernel refused its seccomp listener (%v); commands get an init of their own", rung, v.Errno))
		return ss.core.Probe(ctx, dir, rung)
	}
	if rung != degrade.RungFull && v.Kind == degrade.NotExecutable && v.Step == degrade.StepExec {
		// Every step of the rung's setup held; the zygote could not exec
		// itself (proto.ZygoteArg0). The rung stands, without a session.
		ss.core.SayOnce(fmt.Sprintf("wsh: no session on the %s rung: its init could not exec itself as the zygote (%v); commands get an init of their own", rung, v.Errno))
		return degrade.Verdict{Kind: degrade.Ran}
	}
	if v.Kind == degrade.Ran {
		// The init ended its setup without a word and exited: no
		// session, and no reason to think the host refused it.
		v = degrade.Verdict{Kind: degrade.Failed, Mode: 2, Err: errors.New("the session's jail ended as it started")}
	}
	return v
}

// Renew ends the stale session sj, with every process in it, and
// makes a new one in its place, as the Runner's first was made. It
// returns the session to use: the new one, one another command made
// meanwhile, or nil when none can be made (the command then gets a jail
// of its own, and so do later ones).
func (ss *Sessions) Renew(sj *Jail, why string) *Jail {
	ss.renewMu.Lock()
	defer ss.renewMu.Unlock()
	if cur := ss.current.Load(); cur != sj {
		return cur // renewed by another command
	}
	if ss.closed.Load() {
		return nil
	}
	sj.mu.Lock()
	sj.renewed = true
	sj.mu.Unlock()
	ss.core.ResetFiles(sj) // the shell's file access moves to the new one
	if sj.rung == degrade.RungFull {
		// Said each time: each ends what runs in the session.
		fmt.Fprintf(ss.warn, "wsh: %s: the session's jail ends, with what still runs in it, and a new one is made\n", why)
		sj.close()
	} else {
		// A lower rung's zygote has no view of its own: what runs in it
		// has what a command started as long ago in a jail of its own
		// has (its Landlock domain), and runs on; later commands get
		// the new one. It ends at Close.
		ss.core.SayOnce(fmt.Sprintf("wsh: %s: later commands get a new session; what runs in the old one runs on", why))
		ss.retiredMu.Lock()
		ss.retired = append(ss.retired, sj)
		ss.retiredMu.Unlock()
		sj.retire()
	}
	// The session outlives the command that found it stale: not its
	// context.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Until the new one is stored, commands find the old one ended, and
	// get jails of their own.
	if v := ss.Start(ctx, sj.dir, sj.rung); v.Kind != degrade.Ran || ss.current.Load() == sj {
		ss.core.SayOnce(fmt.Sprintf("wsh: a new session's jail could not be made (%s); commands get a jail of their own", v.Message()))
		return nil
	}
	return ss.current.Load()
}

// Closing says that the Runner closes: no session is made after it.
func (ss *Sessions) Closing() { ss.closed.Store(true) }

// Close ends every session's jail, and every process in it: nothing a
// command left running outlives the Runner. Closing was called before.
func (ss *Sessions) Close() error {
	ss.renewMu.Lock() // a session being made in place of a stale one is made
	ss.renewMu.Unlock()
	var err error
	if sj := ss.current.Load(); sj != nil {
		err = sj.close()
	}
	ss.retiredMu.Lock()
	retired := ss.retired
	ss.retiredMu.Unlock()
	for _, sj := range retired {
		if cerr := sj.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// hostDir is dir resolved on the host: the start directory, for the
// session's jail, made before any jail can resolve it.
func hostDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}
