//go:build linux && cgo

package confine

import (
	"context"

	"wsh/degrade"
	"wsh/internal/gitmediate"
	"wsh/internal/launch"
	"wsh/internal/protect"
	"wsh/internal/proto"
	"wsh/internal/session"
)

// sessionCore is the Jailer as its sessions see it (session.Core).
type sessionCore struct{ j *Jailer }

func (c sessionCore) Request(rung degrade.Rung, dir string) (*launch.Request, session.Pending) {
	return c.j.request(rung, dir, "", nil, nil, nil, nil, nil)
}

func (c sessionCore) SessionFilter(rung degrade.Rung) ([]byte, error) {
	if err := c.j.compileSessionFilter(rung); err != nil {
		return nil, err
	}
	return c.j.sessionFilters[rung], nil
}

func (c sessionCore) SplitFilter() ([2][]byte, error) { return c.j.compileSplitFilter() }

func (c sessionCore) AttachHome(req *launch.Request) func() { return c.j.home.Attach(req) }

func (c sessionCore) AttachProxy(req *launch.Request) (func(), error) {
	br, err := c.j.net.Attach(req)
	return br.Close, err
}

func (c sessionCore) Probe(ctx context.Context, dir string, rung degrade.Rung) degrade.Verdict {
	v, _, _ := c.j.probe(ctx, dir, rung, false)
	return v
}

func (c sessionCore) WatchProtection(prot *protect.Protection, running bool) {
	c.j.watch.Protection(prot, running)
}

func (c sessionCore) NoteConfigs(prot *protect.Protection) { c.j.watch.NoteConfigs(prot) }
func (c sessionCore) WatchBound(paths []proto.PathID)      { c.j.watch.Bound(paths) }
func (c sessionCore) SayHooks(dir string)                  { c.j.watch.SayHooks(dir) }
func (c sessionCore) SayOnce(msg string)                   { c.j.sayOnce(msg) }
func (c sessionCore) ResetFiles(sj *session.Jail)          { c.j.resetFiles(sj) }

// Result is the request's protection, once launch.Run or
// launch.StartSession returned (session.Pending).
func (pp *pendingProtection) Result() (*protect.Protection, *gitmediate.Mediator, error) {
	return pp.prot, pp.git, pp.err
}

// Session says that the Jailer's commands share one jail: WSH_JAIL=session,
// and the session's jail was made and has not ended.
func (j *Jailer) Session() bool { return j.sessions.InForce(j.rung) }
