package proto

// ReadbackArg0 is the argv[0] with which wsh runs itself as the target of a
// probe jail (wsh doctor): it prints a Readback as JSON and exits.
const ReadbackArg0 = "wsh-jail-readback"

// A Readback is what a process reads back from the kernel about itself: the
// proof that a jail is in force, as opposed to the spec that asked for it.
type Readback struct {
	CapInh     string   `json:"cap_inh"`
	CapPrm     string   `json:"cap_prm"`
	CapEff     string   `json:"cap_eff"`
	CapBnd     string   `json:"cap_bnd"`
	CapAmb     string   `json:"cap_amb"`
	NoNewPrivs int      `json:"no_new_privs"` // -1: not in /proc/self/status
	Seccomp    int      `json:"seccomp"`      // the mode: 2 is a filter; -1: not there
	PID        int      `json:"pid"`
	Exe        string   `json:"exe"`  // what /proc/self/exe is: the init's own binary
	PID1       string   `json:"pid1"` // argv[0] of PID 1 in this PID namespace
	NetDevices []string `json:"net_devices"`
	RootRO     bool     `json:"root_read_only"`
	// Home is what the jail shows at the host's home directory, when there
	// is one.
	Home *HomeReadback `json:"home,omitempty"`
	// Proxy is, where the jail has wsh's proxy (HTTPS_PROXY), the status
	// line it answered a tunnel to ProxyProbeHost with, or why there was
	// none.
	Proxy string `json:"proxy,omitempty"`
}

// ProxyProbeHost is the host the readback asks the proxy for: a name that
// cannot exist (.invalid, RFC 2606), which no allowlist names.
const ProxyProbeHost = "wsh-doctor.invalid:443"

// A HomeReadback is the mount in force at the home, from mountinfo, and
// whether wsh's state directory can be read.
type HomeReadback struct {
	Path   string `json:"path"`
	FSType string `json:"fstype"`
	Upper  string `json:"upperdir,omitempty"`
	// StateHidden: opening wsh's state directory gives EACCES (or it
	// does not exist).
	StateHidden bool `json:"state_hidden"`
}

// Confined reports whether r shows the full jail, and if not, what is
// missing. hostNetwork relaxes the network check.
func (r *Readback) Confined(hostNetwork bool) (bool, string) {
	const zero = "0000000000000000"
	switch {
	case r.CapInh != zero || r.CapPrm != zero || r.CapEff != zero || r.CapBnd != zero || r.CapAmb != zero:
		return false, "capabilities are not all empty"
	case r.NoNewPrivs != 1:
		return false, "no_new_privs is not set"
	case r.Seccomp != 2:
		return false, "no seccomp filter"
	case r.PID1 != InitArg0:
		return false, "not in the jail's PID namespace (PID 1 is " + r.PID1 + ")"
	case !r.RootRO:
		return false, "the root is not read-only"
	case !hostNetwork && (len(r.NetDevices) != 1 || r.NetDevices[0] != "lo"):
		return false, "network devices other than lo"
	}
	return true, ""
}
