//go:build linux && cgo

package jailer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/launch"
	"wsh/internal/proto"
	"wsh/internal/verdict"
)

// A sessionJail is the Runner's one jail (WSH_JAIL=session): made once,
// with the hidden paths and the protection as they were then, and every
// command of the Runner forked inside it, as long as that still is what a
// jail of the command's own would be. A command for which it is not (a
// hidden path appeared or moved, a repository appeared where the command
// works) gets a jail of its own, made now, and wsh says why, once.
type sessionJail struct {
	s *launch.Session
	// hidden is what the hidden paths were when the session's jail
	// covered them (hiddenPrint).
	hidden string
	// pins and paths are the protection the jail was made with.
	pins, paths map[proto.PathID]bool

	mu    sync.Mutex
	ended bool            // the session's jail is gone: commands get their own
	said  map[string]bool // the reasons for a jail of a command's own, said once each

	closeOnce sync.Once
	closeErr  error
}

// Session says that the Jailer's commands share one jail: WSH_JAIL=session,
// and the session's jail was made and has not ended.
func (j *Jailer) Session() bool {
	if j.session == nil || j.rung != proto.RungFull {
		return false
	}
	j.session.mu.Lock()
	defer j.session.mu.Unlock()
	return !j.session.ended
}

// startSession makes the session's jail, the Runner's first: it is the
// probe of the host (decide), and its verdict is what a command's jail
// would have had. A made session is kept in j.session.
func (j *Jailer) startSession(ctx context.Context, dir string) verdict.Verdict {
	hidden := j.hiddenPrint()
	req, pp := j.request(proto.RungFull, j.jailDir(dir), "", nil, nil, nil, nil, nil)
	req.Spec.Session, req.Spec.Path, req.Spec.Args, req.Spec.Env = true, "", nil, nil
	done := j.attachHome(req)
	s, facts := launch.StartSession(ctx, req)
	done()
	if pp.prot != nil {
		j.watchProtection(pp.prot, false)
	}
	if pp.err != nil {
		// As Probe: the protected paths cannot be known, which is no
		// verdict on the host; each command's own jail says why.
		return verdict.Verdict{}
	}
	v := verdict.Classify(facts)
	if s == nil {
		if v.Kind == verdict.Ran {
			// The init ended its setup without a word and exited: no
			// session, and no reason to think the host refused it.
			v = verdict.Verdict{Kind: verdict.Failed, Mode: 2, Err: errors.New("the session's jail ended as it started")}
		}
		return v
	}
	sj := &sessionJail{s: s, hidden: hidden, pins: idSet(pp.prot.pins), paths: idSet(pp.prot.paths), said: map[string]bool{}}
	j.session = sj
	return v
}

func idSet(ids []proto.PathID) map[proto.PathID]bool {
	m := make(map[proto.PathID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// hiddenPrint is what the hidden paths are now, as the jail would find
// each: where it leads and what is there (or that nothing is).
func (j *Jailer) hiddenPrint() string {
	var b strings.Builder
	for _, id := range j.policy.hiddenNow() {
		b.WriteString(id.Path)
		b.WriteByte(0)
		if r, _, err := j.policy.realPath(id.Path); err == nil {
			b.WriteString(r)
		}
		b.WriteByte(0)
		if fi, err := j.policy.statView(id.Path); err == nil {
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
func (j *Jailer) sessionRun(ctx context.Context, c *command, dir string) (out proto.Facts, err error, ok bool) {
	sj := j.session
	sj.mu.Lock()
	ended := sj.ended
	sj.mu.Unlock()
	if ended {
		return out, nil, false
	}
	prot, perr := j.protector.protection(dir)
	if perr != nil {
		// As in a command's own jail: no jail rather than one that
		// leaves a protected path writable.
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), perr)
		return out, interp.ExitStatus(126), true
	}
	if why := sj.stale(&prot, j.hiddenPrint()); why != "" {
		sj.sayOnce(j, why)
		return out, nil, false
	}
	umask, uerr := processUmask()
	if uerr != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.name(), uerr)
		return out, interp.ExitStatus(126), true
	}
	j.watchProtection(&prot, true)
	facts := sj.s.Run(ctx, &launch.Command{
		Path: c.path, Args: c.args, Env: c.env, Dir: dir, Umask: umask,
		Stdin: c.hc.Stdin, Stdout: c.hc.Stdout, Stderr: c.hc.Stderr, KillTimeout: j.KillTimeout,
	})
	j.watchProtection(&prot, false)
	switch {
	case ctx.Err() != nil:
	case errors.Is(facts.StartErr, launch.ErrSessionEnded):
		// The jail is gone (its init was killed from outside): this
		// command was not sent, and it and later ones get their own.
		sj.end()
		sj.sayOnce(j, "the session's jail has ended")
		return out, nil, false
	case errors.Is(facts.StartErr, launch.ErrSessionLost):
		// It may have run in part: not run again.
		sj.end()
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v; later commands get a jail of their own\n", c.name(), facts.StartErr)
		return out, interp.ExitStatus(126), true
	}
	return facts, nil, true
}

func (sj *sessionJail) end() {
	sj.mu.Lock()
	sj.ended = true
	sj.mu.Unlock()
}

// stale says why the session's jail is not what a jail made now would be
// for prot and the hidden paths as they are now ("" when it is).
func (sj *sessionJail) stale(prot *protection, hidden string) string {
	if hidden != sj.hidden {
		return "a hidden path changed since the session's jail was made"
	}
	for _, id := range prot.pins {
		if !sj.pins[id] {
			return "a protected path appeared since the session's jail was made (" + id.Path + ")"
		}
	}
	for _, id := range prot.paths {
		if !sj.paths[id] {
			return "a protected path appeared since the session's jail was made (" + id.Path + ")"
		}
	}
	return ""
}

func (sj *sessionJail) sayOnce(j *Jailer, why string) {
	sj.mu.Lock()
	said := sj.said[why]
	sj.said[why] = true
	sj.mu.Unlock()
	if !said {
		fmt.Fprintf(j.warn, "wsh: %s; such commands get a jail of their own, which does not share the session's processes and network\n", why)
	}
}

// close ends the session: every process of its jail is killed.
func (sj *sessionJail) close() error {
	sj.end()
	sj.closeOnce.Do(func() { sj.closeErr = sj.s.Close() })
	return sj.closeErr
}

// processUmask is this process's umask, which a command's own jail
// inherits at its clone, and a session's command is given.
func processUmask() (uint32, error) {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return 0, fmt.Errorf("the umask: %w", err)
	}
	if _, rest, ok := bytes.Cut(b, []byte("\nUmask:\t")); ok {
		if line, _, ok := bytes.Cut(rest, []byte("\n")); ok {
			if m, err := strconv.ParseUint(string(line), 8, 32); err == nil {
				return uint32(m), nil
			}
		}
	}
	return 0, errors.New("the umask: no Umask line in /proc/thread-self/status")
}
