package proto

import (
	"errors"
	"fmt"
	"wsh/degrade"
)

// SessionFD is the descriptor on which the init of a session (Spec.Session)
// takes commands: its end of a SOCK_SEQPACKET socketpair whose other end
// only wsh holds. The init marks it close-on-exec with every other
// descriptor, so no command inherits it, and PID 1 is non-dumpable, so no
// command can open it through /proc/1/fd. In a jail without a home,
// HomeFD and HomeLockFD are /dev/null, so that every descriptor up to this
// one is given.
const SessionFD = 8

// MaxSessionRun bounds one SessionRun: far above a real one (argv and
// environment together are limited to about 2 MiB by the kernel).
const MaxSessionRun = 8 << 20

// The kinds of session message, each one datagram of SessionMsg. wsh sends
// Run (with four descriptors: the command's standard streams and a memfd
// holding its SessionRun) and Signal; the init answers each Run with
// Started or Failed, and then, for a started one, Exited. A lower rung's
// zygote also sends Group, before Started, as its fork makes the command's
// process group. On the full rung wsh also sends Protect (with one
// descriptor: a memfd holding EncodeProtection's pins and paths, the
// protected paths that appeared since the jail was made), which the init
// answers with Protected, once each is bound read-only in the live jail,
// or Failed (Step StepProtect, Value the errno).
const (
	MsgRun     byte = 'R'
	MsgSignal  byte = 'S'
	MsgStarted byte = 'P'
	MsgFailed  byte = 'F'
	MsgExited  byte = 'X'
	MsgGroup   byte = 'G'

	MsgProtect   byte = 'B'
	MsgProtected byte = 'D'
)

// A SessionRun is one command for a session's init to fork.
type SessionRun struct {
	ID    uint64
	Umask uint32
	Dir   string
	Path  string
	Args  []string
	Env   []string
}

// A SessionMsg is one message: Run (ID), Signal (ID, Value the signal, sent to
// the command's process group), Started (Value its pid in the jail),
// Failed (Step the step that failed: StepChdir, StepStdio or StepExec, and
// Value its errno; the command never ran; for a Protect, StepProtect),
// Protected (the Protect ID is done), Exited (Value its status, as
// WaitStatus gives it), Group (Value the pid of a lower rung's fork, sent
// before the zygote lets it make its process group, which then has that
// number: wsh knows every group of the session before it exists).
type SessionMsg struct {
	Kind  byte
	ID    uint64
	Step  degrade.Step
	Value uint32
}

// Encode is the wire form of r.
func (r *SessionRun) Encode() ([]byte, error) {
	var e encoder
	e.b = append(e.b, MsgRun)
	e.u64(r.ID)
	e.u32(r.Umask)
	e.str(r.Dir)
	e.str(r.Path)
	e.strs(r.Args)
	e.strs(r.Env)
	if len(e.b) > MaxSessionRun {
		return nil, fmt.Errorf("session: a command of %d bytes, more than %d", len(e.b), MaxSessionRun)
	}
	return e.b, nil
}

// Encode is the wire form of m.
func (m SessionMsg) Encode() []byte {
	var e encoder
	e.b = append(e.b, m.Kind)
	e.u64(m.ID)
	e.b = append(e.b, byte(m.Step))
	e.u32(m.Value)
	return e.b
}

var errSessionMsg = errors.New("session: malformed message")

// DecodeSessionRun decodes a Run message.
func DecodeSessionRun(b []byte) (*SessionRun, error) {
	if len(b) == 0 || b[0] != MsgRun || len(b) > MaxSessionRun {
		return nil, errSessionMsg
	}
	d := decoder{b: b[1:]}
	r := &SessionRun{ID: d.u64(), Umask: d.u32(), Dir: d.str(), Path: d.str(), Args: d.strs(), Env: d.strs()}
	if d.bad || len(d.b) != 0 || r.Path == "" || len(r.Args) == 0 || r.Dir == "" {
		return nil, errSessionMsg
	}
	return r, nil
}

// DecodeSessionMsg decodes a message.
func DecodeSessionMsg(b []byte) (SessionMsg, error) {
	if len(b) != 1+8+1+4 {
		return SessionMsg{}, errSessionMsg
	}
	d := decoder{b: b[1:]}
	m := SessionMsg{Kind: b[0], ID: d.u64()}
	m.Step = degrade.Step(d.b[0])
	d.b = d.b[1:]
	m.Value = d.u32()
	switch m.Kind {
	case MsgRun, MsgSignal, MsgStarted, MsgFailed, MsgExited, MsgGroup, MsgProtect, MsgProtected:
		return m, nil
	}
	return SessionMsg{}, errSessionMsg
}
