//go:build linux && cgo

package jailer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"

	"wsh/degrade"
	"wsh/internal/gitmediate"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A sessionJail is the Runner's one jail (WSH_JAIL=session): made once,
// with the hidden paths and the protection as they were then, and every
// command of the Runner forked inside it, as long as that still is what a
// jail of the command's own would be. A command for which it is not (a
// hidden path appeared or moved, a repository appeared where the command
// works) gets a jail of its own, made now, and wsh says why, once.
type sessionJail struct {
	s      *launch.Session
	rung   degrade.Rung
	bridge *bridge // its way to the proxy, or nil
	dir    string  // the working directory it was made for (the start directory)
	// hidden is what the hidden paths were when the session's jail
	// covered them (hiddenPrint), and on the landlock rung how the
	// directories above them stood (grantedPrint).
	hidden string
	// pins and paths are the protection the jail was made with, and
	// what was bound in it since (protectInPlace); under mu.
	pins, paths map[proto.PathID]bool
	// git, on the full rung, answers the jail's renames (package gitmediate):
	// a config protected later is given to it with AddConfigs.
	git       *gitmediate.Mediator
	protectMu sync.Mutex // one protectInPlace at a time

	mu      sync.Mutex
	ended   bool // the session's jail is gone: commands get their own
	renewed bool // ended by renewSession, which made another
	running int  // commands sent to it that have not ended
	retired bool // a lower rung's, made anew: closed once running is 0

	closeOnce sync.Once
	closeErr  error
}

// Session says that the Jailer's commands share one jail: WSH_JAIL=session,
// and the session's jail was made and has not ended.
func (j *Jailer) Session() bool {
	sj := j.session.Load()
	if sj == nil || sj.rung != j.rung {
		return false
	}
	sj.mu.Lock()
	defer sj.mu.Unlock()
	return !sj.ended
}

// startSession makes the session's jail on rung, the Runner's first
// there: it is the probe of the host on that rung (decide), and its
// verdict is what a command's jail would have had. A made session is kept
// in j.session. On a lower rung the session is a zygote in the host's
// namespaces, under the rung's Landlock domain and filter, which forks
// every command.
func (j *Jailer) startSession(ctx context.Context, dir string, rung degrade.Rung) degrade.Verdict {
	hidden := j.hiddenPrint()
	req, pp := j.request(rung, j.hostDir(dir), "", nil, nil, nil, nil, nil)
	req.Spec.Session, req.Spec.Path, req.Spec.Args, req.Spec.Env = true, "", nil, nil
	if rung != degrade.RungFull {
		if err := j.compileSessionFilter(rung); err != nil {
			// A libseccomp without SCMP_ACT_NOTIFY (before 2.5, or a
			// kernel it finds without it): the rung stands, without a
			// session; the probe of a command's own jail is still to
			// come, and says its own failures.
			j.sayOnce(fmt.Sprintf("wsh: no session on the %s rung: its filter could not be made (%v); commands get an init of their own", rung, err))
			return j.probeNoSession(ctx, dir, rung)
		}
		req.Spec.Filter = j.sessionFilters[rung]
	} else {
		f, err := j.compileSplitFilter()
		if err != nil {
			return degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepSeccomp, Err: err}
		}
		req.Spec.Filter, req.Spec.ForkFilter = f[0], f[1]
	}
	done := j.attachHome(req)
	br, err := j.attachProxy(req)
	if err != nil {
		done()
		return degrade.Verdict{Kind: degrade.Failed, Mode: 2, Step: degrade.StepLoopback, Err: err}
	}
	s, facts := launch.StartSession(ctx, req)
	done()
	if s == nil {
		br.close()
	}
	if pp.prot != nil {
		j.watchProtection(pp.prot, false)
	}
	if pp.err != nil {
		// As Probe: the protected paths cannot be known, which is no
		// verdict on the host; each command's own jail says why.
		return degrade.Verdict{}
	}
	v := degrade.Classify(facts)
	if s == nil && rung != degrade.RungFull && v.Step == degrade.StepListener {
		// Every step of the rung's setup held but the filter's listener:
		// a kernel before 5.7, or a filter in force with a listener of
		// its own (a supervisor that intercepts system calls). The rung
		// stands, without a session.
		j.sayOnce(fmt.Sprintf("wsh: no session on the %s rung: the kernel refused its seccomp listener (%v); commands get an init of their own", rung, v.Errno))
		return j.probeNoSession(ctx, dir, rung)
	}
	if s == nil && rung != degrade.RungFull && v.Kind == degrade.NotExecutable && v.Step == degrade.StepExec {
		// Every step of the rung's setup held; the zygote could not exec
		// itself (proto.ZygoteArg0). The rung stands, without a session.
		j.sayOnce(fmt.Sprintf("wsh: no session on the %s rung: its init could not exec itself as the zygote (%v); commands get an init of their own", rung, v.Errno))
		return degrade.Verdict{Kind: degrade.Ran}
	}
	if s == nil {
		if v.Kind == degrade.Ran {
			// The init ended its setup without a word and exited: no
			// session, and no reason to think the host refused it.
			v = degrade.Verdict{Kind: degrade.Failed, Mode: 2, Err: errors.New("the session's jail ended as it started")}
		}
		return v
	}
	if rung == degrade.RungLandlock {
		// Taken now, after the setup made what it makes in the start
		// directory (the placeholders of missing protected paths). A
		// change missed between the zygote's grant and now leaves an
		// entry ungranted: less is reachable, never more.
		hidden += j.grantedPrint()
	}
	sj := &sessionJail{s: s, rung: rung, bridge: br, git: pp.git, dir: j.hostDir(dir), hidden: hidden, pins: idSet(pp.prot.Pins), paths: idSet(pp.prot.Paths)}
	j.session.Store(sj)
	return v
}

func idSet(ids []proto.PathID) map[proto.PathID]bool {
	m := make(map[proto.PathID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// probeNoSession is decide's probe of rung without a session: a command's
// own jail there.
func (j *Jailer) probeNoSession(ctx context.Context, dir string, rung degrade.Rung) degrade.Verdict {
	v, _, _ := j.probe(ctx, dir, rung, false)
	return v
}

// sessionPrint is what a session's jail on rung depends on, of the hidden
// paths, now: hiddenPrint, and on the landlock rung grantedPrint.
func (j *Jailer) sessionPrint(rung degrade.Rung) string {
	if rung == degrade.RungLandlock {
		return j.hiddenPrint() + j.grantedPrint()
	}
	return j.hiddenPrint()
}

// grantedPrint is how the landlock rung's grants stand now: the identity
// of each writable path, and the directories above each hidden path (and
// those above /dev, which the landlock rung keeps out of its read grant
// too): their identity and the time their entries last changed.
// The landlock rung grants each entry of those directories, but the
// hidden path's, one by one, and Landlock cannot add a rule to a domain
// in force: an entry made there after the session's zygote was made is
// granted nothing in it, where a jail made now grants it. Less is
// reachable, never more; still the session is then made anew.
func (j *Jailer) grantedPrint() string {
	var b strings.Builder
	seen := map[string]bool{}
	// The writable paths (and the FIFOs' directory) are granted by the
	// inode each path led to then: one moved away and made anew would be
	// writable at its old inode and not at its path.
	for _, w := range append(append([]proto.PathID(nil), j.hiding.Writable...), proto.PathID{Path: j.shmDir.Path}) {
		if w.Path == "" {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(w.Path, &st); err == nil {
			fmt.Fprintf(&b, "w%s\x00%d:%d\n", w.Path, st.Dev, st.Ino)
		} else {
			fmt.Fprintf(&b, "w%s\x00-\n", w.Path)
		}
	}
	hidden := append(j.hiding.HiddenNow(), proto.PathID{Path: "/dev"})
	for _, id := range hidden {
		for d := filepath.Dir(id.Path); ; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				var st syscall.Stat_t
				if err := syscall.Stat(d, &st); err == nil {
					fmt.Fprintf(&b, "%s\x00%d:%d:%d.%d\n", d, st.Dev, st.Ino, st.Mtim.Sec, st.Mtim.Nsec)
				} else {
					fmt.Fprintf(&b, "%s\x00-\n", d)
				}
			}
			if d == "/" || d == "." {
				break
			}
		}
	}
	return b.String()
}

// hiddenPrint is what the hidden paths are now, as the host shows each:
// where it leads and what is there (or that nothing is).
func (j *Jailer) hiddenPrint() string {
	var b strings.Builder
	for _, id := range j.hiding.HiddenNow() {
		b.WriteString(id.Path)
		b.WriteByte(0)
		if r, err := filepath.EvalSymlinks(id.Path); err == nil {
			b.WriteString(r)
		}
		b.WriteByte(0)
		if fi, err := os.Stat(id.Path); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				fmt.Fprintf(&b, "%d:%d", st.Dev, st.Ino)
			}
		} else {
			b.WriteString("-")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// sessionRun runs c in the session's jail, if it still is what c's own
// jail would be; ok is false when c is to get a jail of its own.
func (j *Jailer) sessionRun(ctx context.Context, c *command, dir string) (out degrade.Facts, err error, ok bool) {
	sj := j.session.Load()
	if sj == nil || sj.rung != j.rung {
		return out, nil, false
	}
	if sj.rung == degrade.RungLandlock && onTerminal(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr) {
		// The zygote's Landlock domain grants no terminal (its streams
		// are /dev/null), and a domain in force takes no new rule: a
		// command that opens its terminal by path (/dev/stdout) gets a
		// jail of its own, which grants it.
		return out, nil, false
	}
	protectionOf := func(d string) (protect.Protection, bool) {
		prot, perr := j.protector.Protection(d, sj.rung == degrade.RungFull)
		if perr != nil {
			// As in a command's own jail: no jail rather than one that
			// leaves a protected path writable.
			fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), perr)
		} else if sj.rung == degrade.RungFull {
			j.noteConfigs(&prot)
		}
		return prot, perr == nil
	}
	prot, good := protectionOf(dir)
	if !good {
		return out, interp.ExitStatus(126), true
	}
	sj, choice := j.sessionFor(ctx, sj, dir, &prot, protectionOf)
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
	umask, uerr := scriptUmask(c.hc)
	if uerr != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), uerr)
		return out, interp.ExitStatus(126), true
	}
	if sj.rung != degrade.RungFull {
		// No mounts to keep the protected paths read-only: wsh says
		// after the command which changed, as for a jail of its own.
		prot.TakeStamps()
	}
	j.watchProtection(&prot, true)
	facts := sj.s.Run(ctx, &launch.Command{
		Path: c.path, Args: c.args, Env: j.jailEnv(c.env, sj.rung), Dir: dir, Umask: umask,
		Stdin: c.hc.Stdin, Stdout: c.hc.Stdout, Stderr: c.hc.Stderr, KillTimeout: j.KillTimeout,
		Signals: c.signals(),
	})
	j.watchProtection(&prot, false)
	switch {
	case ctx.Err() != nil:
	case errors.Is(facts.StartErr, launch.ErrSessionEnded):
		// The jail is gone (its init was killed from outside, or made
		// stale and ended by another command): this command was not
		// sent; it gets a jail of its own.
		if !sj.endedByUs() {
			sj.end()
			j.sayOnce("wsh: the session's jail has ended; later commands get a jail of their own")
		}
		return out, nil, false
	case errors.Is(facts.StartErr, launch.ErrSessionLost):
		// It may have run in part: not run again.
		if j.closed.Load() {
			// Runner.Close ended the session, and every process of it,
			// as the command was sent or had just started (a job left
			// running): nothing to say, as for a job killed at Close.
			return out, interp.ExitStatus(proto.SignalStatus(syscall.SIGKILL)), true
		}
		if sj.endedByUs() {
			// Ended by another command's renewSession as this one was
			// sent: it did not start, or was killed with the session.
			fmt.Fprintf(c.hc.Stderr, "wsh: %s: the session's jail was made anew as it started; it did not run\n", c.name())
			return out, interp.ExitStatus(126), true
		}
		sj.end()
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v; later commands get a jail of their own\n", c.name(), facts.StartErr)
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
// protected paths that appeared in the live jail (protectInPlace), or,
// when that cannot be done, ends it and makes another (renewSession),
// whose protection for dir it puts in prot. protectionOf finds a
// directory's protection, and says why it cannot.
func (j *Jailer) sessionFor(ctx context.Context, sj *sessionJail, dir string, prot *protect.Protection, protectionOf func(string) (protect.Protection, bool)) (*sessionJail, int) {
	hidden := j.sessionPrint(sj.rung)
	why := sj.stale(prot, hidden)
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
	ownWhy := sj.stale(&own, hidden)
	if ownWhy != "" && sj.protectable(hidden) {
		// Only protected paths appeared: bound read-only in the live
		// jail, what runs in it runs on.
		if err := j.protectInPlace(ctx, sj, &own); err != nil {
			ownWhy += "; it could not be protected in the session's jail (" + err.Error() + ")"
		} else {
			ownWhy = ""
			if sj.stale(prot, hidden) == "" {
				return sj, inSession
			}
		}
	}
	if ownWhy == "" {
		// Elsewhere: the session's jail is what it was made to be,
		// and this command gets what a jail per command gives it.
		j.sayOnce(fmt.Sprintf("wsh: commands in %s get a jail of their own: the session's jail, made for %s, does not protect %s; they do not share the session's processes and network",
			dir, sj.dir, sj.unprotected(prot)))
		return sj, ownJail
	}
	// What runs in the session's jail has its view, which a jail
	// made now would not give: it ends with it, and a new one is
	// made for this command and the next.
	if sj = j.renewSession(sj, ownWhy); sj == nil {
		return nil, ownJail
	}
	if *prot, good = protectionOf(dir); !good {
		return sj, refused
	}
	if why := sj.stale(prot, j.sessionPrint(sj.rung)); why != "" {
		// Changing as fast as sessions are made: this one gets a
		// jail of its own.
		return sj, ownJail
	}
	return sj, inSession
}

// done is a command's end in sj: a retired session's last closes it.
func (sj *sessionJail) done() {
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
func (sj *sessionJail) retire() {
	sj.mu.Lock()
	sj.ended, sj.retired = true, true
	idle := sj.running == 0
	sj.mu.Unlock()
	if idle {
		sj.close()
	}
}

func (sj *sessionJail) end() {
	sj.mu.Lock()
	sj.ended = true
	sj.mu.Unlock()
}

// stale says why the session's jail is not what a jail made now would be
// for prot and the hidden paths as they are now ("" when it is).
func (sj *sessionJail) stale(prot *protect.Protection, hidden string) string {
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
	if p := sj.unprotected(prot); p != "" {
		return "a protected path appeared since the session's jail was made (" + p + ")"
	}
	return ""
}

// unprotected is a path of prot that the session's jail does not protect
// ("" when there is none).
func (sj *sessionJail) unprotected(prot *protect.Protection) string {
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

// renewSession ends the stale session sj, with every process in it, and
// makes a new one in its place, as the Runner's first was made. It
// returns the session to use: the new one, one another command made
// meanwhile, or nil when none can be made (the command then gets a jail
// of its own, and so do later ones).
func (j *Jailer) renewSession(sj *sessionJail, why string) *sessionJail {
	j.renewMu.Lock()
	defer j.renewMu.Unlock()
	if cur := j.session.Load(); cur != sj {
		return cur // renewed by another command
	}
	if j.closed.Load() {
		return nil
	}
	sj.mu.Lock()
	sj.renewed = true
	sj.mu.Unlock()
	j.resetFiles(sj) // the shell's file access moves to the new one
	if sj.rung == degrade.RungFull {
		// Said each time: each ends what runs in the session.
		fmt.Fprintf(j.warn, "wsh: %s: the session's jail ends, with what still runs in it, and a new one is made\n", why)
		sj.close()
	} else {
		// A lower rung's zygote has no view of its own: what runs in it
		// has what a command started as long ago in a jail of its own
		// has (its Landlock domain), and runs on; later commands get
		// the new one. It ends at Close.
		j.sayOnce(fmt.Sprintf("wsh: %s: later commands get a new session; what runs in the old one runs on", why))
		j.retiredMu.Lock()
		j.retired = append(j.retired, sj)
		j.retiredMu.Unlock()
		sj.retire()
	}
	// The session outlives the command that found it stale: not its
	// context.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Until the new one is stored, commands find the old one ended, and
	// get jails of their own.
	if v := j.startSession(ctx, sj.dir, sj.rung); v.Kind != degrade.Ran || j.session.Load() == sj {
		j.sayOnce(fmt.Sprintf("wsh: a new session's jail could not be made (%s); commands get a jail of their own", v.Message()))
		return nil
	}
	return j.session.Load()
}

// endedByUs says that the session was ended by renewSession.
func (sj *sessionJail) endedByUs() bool {
	sj.mu.Lock()
	defer sj.mu.Unlock()
	return sj.renewed
}

// sayOnce says msg on the warning stream, once for each msg.
func (j *Jailer) sayOnce(msg string) {
	if _, said := j.madeSaid.LoadOrStore("session:"+msg, true); !said {
		fmt.Fprintln(j.warn, msg)
	}
}

// close ends the session: every process of its jail is killed.
func (sj *sessionJail) close() error {
	sj.end()
	sj.closeOnce.Do(func() {
		sj.closeErr = sj.s.Close()
		sj.bridge.close()
	})
	return sj.closeErr
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
