//go:build linux && cgo

package confine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"wsh/degrade"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
	"wsh/internal/session"
	"wsh/internal/shellfs"
	"wsh/internal/umask"
)

// The shell's own file access is done in the jail by package shellfs;
// what it asks of the Jailer is here: whether it is done in the jail, the
// jails its file servers run in, and the protection a write of the
// shell's takes.

// jailedFiles says that the shell's file access is done in the jail: on
// the rungs with a file policy of the kernel's (mounts, Landlock).
func (j *Jailer) jailedFiles() bool {
	return !j.cfg.NoSandbox && (j.rung == degrade.RungFull || j.rung == degrade.RungLandlock)
}

// refusedFiles says that no jail can do the shell's file access, and
// none may be done without one: WSH_REQUIRE_SANDBOX, and the host refused
// the jail, or gave only a rung below the floor.
func (j *Jailer) refusedFiles() bool {
	_, refused := j.Refused()
	return refused && !j.cfg.NoSandbox
}

// newFiles is the shell's file access of j.
func (j *Jailer) newFiles() *shellfs.Files {
	return shellfs.New(shellfs.Core{Refused: j.Refused, Launch: j.launchFiles, Write: j.shellWrite,
		Umask: umask.Shell, FailClosed: failClosed, Warn: j.warn})
}

// shellWrite takes the protection of a write of the shell's in the
// handler's directory dir (shellfs.Core.Write): the protected paths of the
// directory are what the jail it is done in must protect, as a command's
// there, and, where the rung cannot keep one from being made or changed,
// what is said after, as after a command.
func (j *Jailer) shellWrite(dir string) (string, *protect.Protection, func(), error) {
	if !j.writeMu.TryRLock() {
		return "", nil, nil, shellfs.ErrEnded // the Runner is closing
	}
	full := j.rung == degrade.RungFull
	dir = j.hostDir(dir)
	prot, err := j.protector.Protection(dir, full)
	if err != nil {
		j.writeMu.RUnlock()
		return "", nil, nil, err
	}
	if !full {
		prot.TakeStamps()
	}
	return dir, &prot, func() {
		j.watch.ShellWrite(dir, &prot)
		j.writeMu.RUnlock()
	}, nil
}

// A filesJail is the jail a file server runs in (shellfs.Jail).
type filesJail struct {
	j  *Jailer
	sj *session.Jail // the session it runs in; nil: a jail of its own
	// made is what its jail was made with: the session's, or, for a jail
	// of its own, the same record (no session in it).
	made *session.Jail
}

// resetFiles ends the file server of session sj (made anew): the next
// access starts one in the session in force.
func (j *Jailer) resetFiles(sj *session.Jail) {
	j.files.Reset(func(s shellfs.Jail) bool { fj, ok := s.(*filesJail); return ok && fj.sj == sj })
}

// launchFiles makes ready a file server's jail (shellfs.Core.Launch): in
// the session's jail (dir "", and a session is in force), or in a jail of
// its own on the rung in force, made for dir (the start directory where
// dir is "").
func (j *Jailer) launchFiles(ctx context.Context, dir string, sock *os.File, started func(int)) (shellfs.Jail, func() degrade.Facts, error) {
	if _, degraded := j.state.Degraded(); degraded {
		j.warnOnce() // a script of builtins alone says the rung too
	}
	inSession := dir == ""
	if inSession {
		dir = j.filesDir()
	}
	args := []string{proto.FilesArg0}
	fj := &filesJail{j: j}
	if sj := j.sessions.Current(); inSession && sj != nil && sj.Rung() == j.rung && sj.Live() {
		fj.sj, fj.made = sj, sj
		return fj, func() degrade.Facts {
			// Its pidfd from its start, from the host's view: a command
			// of the session can stop it before it says a word itself.
			return sj.Run(ctx, &launch.Command{Path: "/proc/self/exe", Args: args, Dir: sj.Dir(), Stdin: sock, Started: started})
		}, nil
	}
	// What its jail is made with, taken before it is: a change between
	// the two makes it stale at once, never fresh wrongly.
	hidden := j.sessions.Print(j.rung)
	var made *protect.Protection
	if j.rung == degrade.RungFull {
		prot, err := j.protector.Protection(dir, true)
		if err != nil {
			return nil, nil, err
		}
		made = &prot
	}
	fj.made = session.Record(j.rung, dir, hidden, made)
	return fj, func() degrade.Facts {
		// Its output is /dev/null: it writes none (a crash is said by
		// its end), and the warning stream may be a caller's writer
		// that other copies write to.
		req, pp := j.request(j.rung, dir, "/proc/self/exe", args, nil, sock, nil, nil)
		req.Spec.UmaskSet = true
		done := j.home.Attach(req)
		out := launch.Run(ctx, req)
		done()
		if pp.prot != nil {
			j.watch.Protection(pp.prot, false)
		}
		if pp.err != nil {
			// The protected paths cannot all be known: the init failed
			// its protect step on purpose; that is the reason.
			out = degrade.Facts{StartErr: pp.err}
		}
		return out
	}, nil
}

// filesDir is where a file server of its own starts: the start directory
// as the jail resolves it.
func (j *Jailer) filesDir() string {
	if d, err := filepath.EvalSymlinks(j.startDir); err == nil {
		return d
	}
	return j.startDir
}

// Stale says why the server's jail is not what a jail made now would be
// for an access in dir ("" when it is), and whether only for dir.
func (fj *filesJail) Stale(write bool, dir string, prot *protect.Protection) (why string, elsewhere bool) {
	j, m := fj.j, fj.made
	if why := m.Stale(&protect.Protection{}, j.sessions.Print(m.Rung())); why != "" {
		return why, false
	}
	if !write || prot == nil || m.Rung() != degrade.RungFull {
		// The protected paths are mounts on the full rung alone (a lower
		// rung says after a command which changed); what is read, listed
		// or stated does not depend on them.
		return "", false
	}
	p := m.Unprotected(prot)
	if p == "" {
		return "", false
	}
	if dir != m.Dir() {
		if own, err := j.protector.Protection(m.Dir(), true); err == nil && m.Unprotected(&own) == "" {
			return "a protected path in " + dir, true
		}
	}
	return "a protected path appeared since the session's jail was made (" + p + ")", false
}

// Renew makes the server's session anew (session.Sessions.Renew), where
// it runs in one.
func (fj *filesJail) Renew(why string) {
	if fj.sj != nil {
		fj.j.sessions.Renew(fj.sj, why)
	}
}

// Protect binds in the server's live session's jail, as a command's start
// would (session.Sessions.Run), the protected paths that appeared since it was
// made, before a write of the shell's in dir whose protection is prot.
func (fj *filesJail) Protect(ctx context.Context, dir string, prot *protect.Protection) {
	j, sj := fj.j, fj.sj
	if sj == nil {
		return // the next server is started in a jail made now
	}
	if sj.Rung() != degrade.RungFull || sj.Unprotected(prot) == "" {
		return // the common case, before the look at the hidden paths
	}
	hidden := j.sessions.Print(sj.Rung())
	if !sj.Protectable(hidden) || sj.Stale(prot, hidden) == "" {
		return
	}
	own := *prot
	if dir != sj.Dir() {
		var err error
		if own, err = j.protector.Protection(sj.Dir(), true); err != nil {
			return // get says it, as it finds the session stale
		}
	}
	if sj.Stale(&own, hidden) == "" {
		return // stale for dir alone: a server of its own does it (get)
	}
	j.watch.NoteConfigs(&own)
	if err := j.sessions.ProtectInPlace(ctx, sj, &own); err != nil {
		fmt.Fprintf(j.warn, "wsh: %s could not be protected in the session's jail (%v)\n", sj.Unprotected(&own), err)
	}
}
