package proto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"wsh/degrade"
)

// InitArg0 is the argv[0] with which wsh re-executes itself as the jail init.
const InitArg0 = "wsh-jail-init"

// ZygoteArg0 is the argv[0] with which a lower rung's session init
// (Spec.Session) execs itself once its setup is over: every thread of the
// new image starts from the thread the setup confined (Landlock and the
// capabilities are a thread's own), and it serves the session on
// SessionFD, closing ReportFD once it does.
const ZygoteArg0 = "wsh-jail-zygote"

// A Spec is what the parent asks of one jail.
type Spec struct {
	// Writable paths are bound read-write at the same paths; all must be
	// absolute, existing and resolved.
	Writable []PathID
	// Hidden paths get an empty, unreadable mount over them. Those that
	// did not exist when wsh started have no identity (Dev and Ino 0) and
	// are left alone.
	Hidden []PathID
	// ShmDir, a directory in the host's /dev/shm, is bound read-only at the
	// same path in the jail's own /dev/shm: the interpreter's FIFOs, which
	// no jail can write to, of this session or another.
	ShmDir PathID
	// Filter is the seccomp policy's BPF program, compiled by the parent
	// for this spec (CompileFilter). The init only loads it: without one
	// the seccomp step fails (EINVAL), and the jail with it.
	Filter []byte
	// ForkFilter, set for a session's init on the full rung, is the part
	// of the policy that Filter then leaves out (the mount calls,
	// seccomp.CompileSplit): the init loads Filter on every thread and
	// ForkFilter on the thread that forks the commands alone, so that its
	// protector's thread can bind what appears later (MsgProtect).
	ForkFilter []byte
	// GitFilter, on the full rung, is the policy's GitGroup alone (renames
	// go to wsh's listener), left out of Filter: the init loads it after
	// Filter with a listener it sends on GitFD. A host that gives no
	// listener (its own supervisor has one: EBUSY; a kernel before 5.7:
	// EINVAL) gets the jail without it, and wsh says so: a rename onto a
	// protected config is then refused (EBUSY), as before wsh made them.
	GitFilter []byte
	// Home, when its Path is set, is the host's home directory, over which
	// the init mounts the copy-on-write home it finds on HomeFD. HomeMounts
	// are the host's mounts beneath it, bound again (read-only) on top.
	Home       PathID
	HomeMounts []string
	// Pins are directories beneath the writable paths that are bound onto
	// themselves, so that none can be renamed or removed (a mount point
	// cannot): the ancestors of the protected paths. Protect are the
	// protected paths that exist, bound read-only onto themselves.
	Pins    []PathID
	Protect []PathID
	// ProtectLater says that Pins and Protect are not in the spec but come
	// on ProtectFD (EncodeProtection), which the init reads when its setup
	// reaches them: the parent finds them while the init starts.
	ProtectLater bool
	// AllowUnix lets the target create unix sockets (and so connect to
	// any socket file it can see).
	AllowUnix bool
	// HostNetwork shares the host's network namespace.
	HostNetwork bool
	// ProxyPort, when not 0, is the port of wsh's proxy. On the full
	// rung, the init listens on 127.0.0.1:ProxyPort in the jail's network
	// namespace, in its loopback step, and sends the listening socket to
	// wsh on ProxyFD, which then serves it: no target runs before it is
	// listening. On the landlock rung it is the one TCP port of the
	// host's loopback that a command may connect to (Landlock ABI 4).
	ProxyPort uint16
	// Session makes the init a session's: after its setup it runs no
	// target of its own, but forks each command it is sent on SessionFD
	// inside the jail (SessionRun), until wsh closes its end. Path and
	// Args are then empty. On a lower rung the init is a zygote in the
	// host's namespaces, whose commands inherit its Landlock domain and
	// filter (with SessionForkGroup in SessionGroup's place).
	Session bool
	// Rung is the rung of the ladder the init sets up: RungFull (the
	// namespaces), or RungLandlock or RungSeccomp, where the init is in
	// the host's namespaces and execs the target itself.
	Rung degrade.Rung
	// Dir is the working directory of the target.
	Dir string
	// Path is the resolved executable; Args is its argv, Args[0] included.
	Path string
	Args []string
	// Umask, with UmaskSet, is the file mode creation mask the target
	// starts with (the script's umask builtin); without, the init's own,
	// inherited from wsh.
	Umask    uint16
	UmaskSet bool
	// Env is the target's environment. The init itself runs with an
	// empty one: nothing a command's environment says (LD_PRELOAD,
	// LD_LIBRARY_PATH, GODEBUG, ...) acts on the init, whatever binary it
	// is (the embedded init, wsh itself, an embedder's program).
	Env []string
}

// SpecFD is the descriptor on which the jail init reads its spec. The
// spec is not in argv: one argv string is limited to 128 KiB (the target's
// own argv would be), and /proc/1/cmdline would show it in the jail.
const SpecFD = 4

// HomeFD is the descriptor on which a jail init with a Spec.Home finds the
// detached mount of the copy-on-write home, and HomeLockFD the lock of
// that mount (a shared flock, KeeperSpec), which it holds until every
// process of the jail is gone: no other mount of the home's upper
// directory may be made while this one is in use.
const (
	HomeFD     = 6
	HomeLockFD = 7
)

// ProtectFD is the descriptor on which a jail init with
// Spec.ProtectLater reads the pins and the protected paths (a pipe, read
// to its end), or word that there are none to be had: the jail is then
// not made.
const ProtectFD = 5

// ProxyFD is the descriptor, a unix socket, on which a jail init with a
// Spec.ProxyPort on the full rung sends its proxy listener (SCM_RIGHTS),
// and which it then closes.
const ProxyFD = 9

// GitFD is the descriptor, a unix socket, on which a jail init of the
// full rung sends its seccomp filter's listener (SCM_RIGHTS) to wsh, and
// which it then closes: the filter's GitGroup sends every rename to wsh,
// which writes a protected git config itself (package gitmediate).
const GitFD = 10

// specMagic starts the wire form; the last byte is its version.
const specMagic = "wsh-spec\x0a"

// maxSpec bounds what the init reads: far above a real spec (argv and
// environment together are limited to about 2 MiB by the kernel).
const maxSpec = 64 << 20

// Encode returns the spec's wire form: a small binary form that the init
// decodes without reflection (JSON cost the init about 0.3 ms).
func (s *Spec) Encode() ([]byte, error) {
	var e encoder
	e.b = append(e.b, specMagic...)
	var flags byte
	if s.AllowUnix {
		flags |= 1
	}
	if s.HostNetwork {
		flags |= 2
	}
	if s.ProtectLater {
		flags |= 4
	}
	if s.Session {
		flags |= 8
	}
	if s.UmaskSet {
		flags |= 16
	}
	e.b = append(e.b, flags, byte(s.Rung))
	e.b = binary.LittleEndian.AppendUint16(e.b, s.ProxyPort)
	e.b = binary.LittleEndian.AppendUint16(e.b, s.Umask)
	e.ids(s.Writable)
	e.ids(s.Hidden)
	e.id(s.ShmDir)
	e.id(s.Home)
	e.strs(s.HomeMounts)
	e.ids(s.Pins)
	e.ids(s.Protect)
	e.bytes(s.Filter)
	e.bytes(s.ForkFilter)
	e.bytes(s.GitFilter)
	e.str(s.Dir)
	e.str(s.Path)
	e.strs(s.Args)
	e.strs(s.Env)
	if len(e.b) > maxSpec {
		return nil, fmt.Errorf("jail spec: %d bytes, more than %d", len(e.b), maxSpec)
	}
	return e.b, nil
}

// ReadSpec reads and checks a spec.
func ReadSpec(r io.Reader) (*Spec, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSpec+1))
	if err != nil {
		return nil, fmt.Errorf("jail init: spec: %w", err)
	}
	s, err := decodeSpec(b)
	if err != nil {
		return nil, fmt.Errorf("jail init: spec: %w", err)
	}
	if s.Dir == "" || !s.Session && (s.Path == "" || len(s.Args) == 0) || s.Session && (s.Path != "" || len(s.Args) != 0) {
		return nil, errors.New("jail init: incomplete spec")
	}
	return s, nil
}

var errSpec = errors.New("malformed")

func decodeSpec(b []byte) (*Spec, error) {
	if len(b) > maxSpec || !bytes.HasPrefix(b, []byte(specMagic)) {
		return nil, errSpec
	}
	d := decoder{b: b[len(specMagic):]}
	var s Spec
	flags := d.byte()
	s.AllowUnix, s.HostNetwork, s.ProtectLater, s.Session = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0
	s.UmaskSet = flags&16 != 0
	s.Rung = degrade.Rung(d.byte())
	s.ProxyPort = d.uint16()
	s.Umask = d.uint16()
	s.Writable = d.ids()
	s.Hidden = d.ids()
	s.ShmDir = d.id()
	s.Home = d.id()
	s.HomeMounts = d.strs()
	s.Pins = d.ids()
	s.Protect = d.ids()
	s.Filter = d.bytes()
	s.ForkFilter = d.bytes()
	s.GitFilter = d.bytes()
	s.Dir = d.str()
	s.Path = d.str()
	s.Args = d.strs()
	s.Env = d.strs()
	if d.bad || len(d.b) != 0 || flags&^31 != 0 || s.Umask&^0o777 != 0 || s.Rung >= degrade.RungNone ||
		s.ProxyPort != 0 && (s.HostNetwork || s.Rung == degrade.RungSeccomp) {
		return nil, errSpec
	}
	return &s, nil
}

// protectMagic starts what comes on ProtectFD; protectAbort instead says
// the parent could not find the protected paths.
const (
	protectMagic = "wsh-protect\x01"
	protectAbort = "wsh-protect-abort"
)

// EncodeProtection is the wire form of the pins and protected paths, for
// ProtectFD; abort (the parent could not find them all) is sent as
// AbortProtection. More than the init reads is an error.
func EncodeProtection(pins, paths []PathID) ([]byte, error) {
	var e encoder
	e.b = append(e.b, protectMagic...)
	e.ids(pins)
	e.ids(paths)
	if len(e.b) > maxSpec {
		return nil, fmt.Errorf("the protected paths take %d bytes, more than the %d a jail takes", len(e.b), maxSpec)
	}
	return e.b, nil
}

// AbortProtection is what the parent sends on ProtectFD when the protected
// paths cannot all be known: the init then fails its protect step.
func AbortProtection() []byte { return []byte(protectAbort) }

// ReadProtection reads what came on ProtectFD. aborted is true when the
// parent sent word that it has none, or nothing (it died first).
func ReadProtection(r io.Reader) (pins, paths []PathID, aborted bool, err error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSpec+1))
	if err != nil {
		return nil, nil, false, fmt.Errorf("protected paths: %w", err)
	}
	if string(b) == protectAbort || len(b) == 0 {
		return nil, nil, true, nil
	}
	if len(b) > maxSpec || !bytes.HasPrefix(b, []byte(protectMagic)) {
		return nil, nil, false, fmt.Errorf("protected paths: %w", errSpec)
	}
	d := decoder{b: b[len(protectMagic):]}
	pins, paths = d.ids(), d.ids()
	if d.bad || len(d.b) != 0 {
		return nil, nil, false, fmt.Errorf("protected paths: %w", errSpec)
	}
	return pins, paths, false, nil
}

type encoder struct{ b []byte }

func (e *encoder) u32(v uint32)   { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64)   { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) bytes(v []byte) { e.u32(uint32(len(v))); e.b = append(e.b, v...) }
func (e *encoder) str(v string)   { e.u32(uint32(len(v))); e.b = append(e.b, v...) }
func (e *encoder) id(p PathID)    { e.str(p.Path); e.u64(p.Dev); e.u64(p.Ino) }
func (e *encoder) strs(ss []string) {
	e.u32(uint32(len(ss)))
	for _, v := range ss {
		e.str(v)
	}
}
func (e *encoder) ids(ps []PathID) {
	e.u32(uint32(len(ps)))
	for _, p := range ps {
		e.id(p)
	}
}

// A decoder reads the wire form; any read past the end sets bad and
// returns zero values from then on.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) take(n uint64) []byte {
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) uint16() uint16 {
	if v := d.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// count reads a number of items of at least min bytes each, and refuses
// one that the rest of the input cannot hold.
func (d *decoder) count(min int) int {
	n := d.u32()
	if uint64(n)*uint64(min) > uint64(len(d.b)) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	v := d.take(uint64(d.u32()))
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (d *decoder) str() string { return string(d.take(uint64(d.u32()))) }

func (d *decoder) strs() []string {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) id() PathID { return PathID{Path: d.str(), Dev: d.u64(), Ino: d.u64()} }

func (d *decoder) ids() []PathID {
	n := d.count(4 + 8 + 8)
	if n == 0 {
		return nil
	}
	out := make([]PathID, n)
	for i := range out {
		out[i] = d.id()
	}
	return out
}

// UnixGroup is the rule group that WSH_UNIX_SOCKETS=allow leaves out.
const UnixGroup = "unix"

// SkipGroups are the groups a spec leaves out of the policy: the unix
// group with AllowUnix; on the full rung, the groups of the rungs without
// namespaces (whose namespaces do their work); on the others, the git
// config group (no listener of wsh's there), and with the
// host's network, both net groups; with a proxy port, the net group (the
// net-proxy group and Landlock leave TCP to the proxy's port); otherwise
// the net-proxy group (the net group refuses every internet socket).
func (s *Spec) SkipGroups() []string {
	var skip []string
	if s.AllowUnix {
		skip = append(skip, UnixGroup)
	}
	// GitGroup is a program of its own (GitFilter), on the full rung only.
	skip = append(skip, GitGroup)
	if s.Rung == degrade.RungFull {
		return append(skip, LowerRungGroups()...)
	}
	switch {
	case s.Session:
		skip = append(skip, SessionGroup)
	default:
		skip = append(skip, SessionForkGroup)
	}
	switch {
	case s.HostNetwork:
		skip = append(skip, NetGroup, NetProxyGroup)
	case s.ProxyPort != 0:
		skip = append(skip, NetGroup)
	default:
		skip = append(skip, NetProxyGroup) // NetGroup refuses more
	}
	return skip
}
