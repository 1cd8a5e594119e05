package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// InitArg0 is the argv[0] with which wsh re-executes itself as the jail init.
const InitArg0 = "wsh-jail-init"

// A Spec is what the parent asks of one jail.
type Spec struct {
	// Writable paths are bound read-write at the same paths; all must be
	// absolute, existing and resolved.
	Writable []PathID `json:"w,omitempty"`
	// Hidden paths get an empty, unreadable mount over them. Those that
	// did not exist when wsh started have no identity (Dev and Ino 0) and
	// are left alone.
	Hidden []PathID `json:"h,omitempty"`
	// ShmDir, a directory in the host's /dev/shm, is bound read-only at the
	// same path in the jail's own /dev/shm: the interpreter's FIFOs, which
	// no jail can write to, of this session or another.
	ShmDir PathID `json:"s,omitempty"`
	// Filter is the seccomp policy's BPF program, compiled by the parent
	// for this spec (CompileFilter). The init only loads it: without one
	// the seccomp step fails (EINVAL), and the jail with it.
	Filter []byte `json:"f,omitempty"`
	// AllowUnix lets the target create unix sockets (and so connect to
	// any socket file it can see).
	AllowUnix bool `json:"u,omitempty"`
	// HostNetwork shares the host's network namespace.
	HostNetwork bool `json:"n,omitempty"`
	// Dir is the working directory of the target.
	Dir string `json:"d"`
	// Path is the resolved executable; Args is its argv, Args[0] included.
	Path string   `json:"p"`
	Args []string `json:"a"`
}

// SpecFD is the descriptor on which the jail init reads its spec. The
// spec is not in argv: one argv string is limited to 128 KiB (the target's
// own argv would be), and /proc/1/cmdline would show it in the jail.
const SpecFD = 4

// Encode returns the spec's wire form.
func (s *Spec) Encode() ([]byte, error) { return json.Marshal(s) }

// ReadSpec reads and checks a spec.
func ReadSpec(r io.Reader) (*Spec, error) {
	var s Spec
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("jail init: spec: %w", err)
	}
	if s.Path == "" || len(s.Args) == 0 || s.Dir == "" {
		return nil, errors.New("jail init: incomplete spec")
	}
	return &s, nil
}

// UnixGroup is the rule group that WSH_UNIX_SOCKETS=allow leaves out.
const UnixGroup = "unix"

// SkipGroups are the groups a spec leaves out of the policy.
func (s *Spec) SkipGroups() []string {
	if s.AllowUnix {
		return []string{UnixGroup}
	}
	return nil
}
