// Package config loads and validates wsh's configuration from the WSH_*
// environment variables. No other package reads them, and nothing is
// silently defaulted: a malformed value is an error that names the variable.
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/caarlos0/env/v11"

	"wsh/internal/hostrule"
)

// UnixSockets says whether jailed commands may create unix sockets.
type UnixSockets string

const (
	// UnixDeny refuses socket(AF_UNIX): host daemons' socket files are out
	// of reach. socketpair(2) still works.
	UnixDeny UnixSockets = "deny"
	// UnixAllow allows them: every socket file the jail can see is
	// reachable.
	UnixAllow UnixSockets = "allow"
)

// UnmarshalText accepts exactly "deny" and "allow".
func (u *UnixSockets) UnmarshalText(b []byte) error { return oneOf(u, b, UnixDeny, UnixAllow) }

// Network says which network namespace a jailed command gets.
type Network string

const (
	// NetworkNone is a network namespace of its own with only loopback.
	NetworkNone Network = "none"
	// NetworkHost shares the host's network.
	NetworkHost Network = "host"
	// NetworkProxy is a network namespace of its own with only loopback,
	// where wsh's proxy (HTTP_PROXY and the like) reaches the hosts
	// AllowHosts names, and nothing else.
	NetworkProxy Network = "proxy"
)

// UnmarshalText accepts exactly "none", "host" and "proxy".
func (n *Network) UnmarshalText(b []byte) error {
	return oneOf(n, b, NetworkNone, NetworkHost, NetworkProxy)
}

// HomeMode says what the jail's $HOME is.
type HomeMode string

const (
	// HomeOverlay is a copy-on-write home: commands read the host's home
	// and write to wsh's own state directory, never to the host's home.
	HomeOverlay HomeMode = "overlay"
	// HomeReadonly is the host's home, read-only.
	HomeReadonly HomeMode = "readonly"
	// HomeCow is HomeOverlay required: a home that cannot be
	// copy-on-write (missing, another user's, wsh's state directory out
	// of reach) is an error, where HomeOverlay makes it read-only and
	// says so.
	HomeCow HomeMode = "cow"
)

// UnmarshalText accepts exactly "overlay", "cow" and "readonly".
func (h *HomeMode) UnmarshalText(b []byte) error {
	return oneOf(h, b, HomeOverlay, HomeCow, HomeReadonly)
}

// oneOf sets *dst to b if it is one of the accepted values.
func oneOf[T ~string](dst *T, b []byte, accepted ...T) error {
	for _, a := range accepted {
		if T(b) == a {
			*dst = a
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %v", string(b), accepted)
}

// JailMode says how many jails a Runner's commands get.
type JailMode string

const (
	// JailSession is one jail for all the commands of a Runner: they
	// share its loopback network, PIDs, IPC and /dev/shm, as commands of
	// one bash script share a machine, and nothing with another Runner.
	JailSession JailMode = "session"
	// JailCommand is a jail for each command: commands share nothing.
	JailCommand JailMode = "command"
)

// UnmarshalText accepts exactly "session" and "command".
func (m *JailMode) UnmarshalText(b []byte) error { return oneOf(m, b, JailSession, JailCommand) }

// A Floor is the lowest rung of the ladder a configuration accepts
// (docs/sandbox.md, "The ladder").
type Floor string

const (
	FloorNone     Floor = ""
	FloorFull     Floor = "full"
	FloorLandlock Floor = "landlock"
	FloorSeccomp  Floor = "seccomp"
)

// UnmarshalText reads WSH_REQUIRE_SANDBOX: a rung's name, or a boolean
// (true is the full jail).
func (f *Floor) UnmarshalText(b []byte) error {
	if v, err := strconv.ParseBool(string(b)); err == nil {
		*f = FloorNone
		if v {
			*f = FloorFull
		}
		return nil
	}
	switch Floor(b) {
	case FloorFull, FloorLandlock, FloorSeccomp:
		*f = Floor(b)
		return nil
	}
	return fmt.Errorf("%q is not a floor", string(b))
}

// Config is wsh's whole configuration.
type Config struct {
	// NoSandbox is the deterministic opt-out: no jail, no attempt, no warning.
	NoSandbox bool `env:"WSH_NO_SANDBOX"`
	// RequireSandbox fails closed below a floor: where the host refuses
	// the rungs of the ladder down to it, a command is exit 126 and never
	// runs with less. FloorNone ("") asks for nothing; 1 and true in
	// WSH_REQUIRE_SANDBOX are FloorFull.
	RequireSandbox Floor `env:"WSH_REQUIRE_SANDBOX"`
	// Writable are paths bound read-write in the jail, besides the working
	// directory, /tmp and $TMPDIR.
	Writable []string `env:"WSH_WRITABLE" envSeparator:":"`
	// Hide are paths that nothing in wsh can read: in the jail an empty,
	// unreadable mount goes over them; in process, open, stat, readdir,
	// glob and test refuse them.
	Hide []string `env:"WSH_HIDE" envSeparator:":"`
	// UnixSockets is whether jailed commands may create unix sockets:
	// deny (socketpair still works) or allow.
	UnixSockets UnixSockets `env:"WSH_UNIX_SOCKETS" envDefault:"deny"`
	// Network is the jail's network: none (loopback only), proxy
	// (loopback, and the hosts of AllowHosts through wsh's proxy) or host.
	Network Network `env:"WSH_NETWORK" envDefault:"none"`
	// AllowHosts are the hosts wsh's proxy connects to with
	// WSH_NETWORK=proxy: names, *.domain (its subdomains), IPv4 or
	// bracketed IPv6 addresses, each with an optional :port (none: any
	// port). A name that resolves to a loopback, private or link-local
	// address is refused unless that address is listed too.
	AllowHosts []string `env:"WSH_ALLOW_HOSTS" envSeparator:","`
	// DenyHosts are hosts the proxy refuses even where AllowHosts names
	// them, in the same form: deny wins over allow.
	DenyHosts []string `env:"WSH_DENY_HOSTS" envSeparator:","`
	// Home is the jail's $HOME: overlay (copy-on-write where it can be),
	// cow (copy-on-write, or no command runs) or readonly.
	Home HomeMode `env:"WSH_HOME" envDefault:"overlay"`
	// Protect adds protected paths to the defaults: absolute paths, or
	// names (relative paths) matched in every writable path.
	Protect []string `env:"WSH_PROTECT" envSeparator:":"`
	// Jail is session (one jail per Runner, its commands forked inside
	// it) or command (a jail for each command).
	Jail JailMode `env:"WSH_JAIL" envDefault:"session"`
}

// variables lists every variable Load reads, with what it accepts
// (Variables gives a copy: no caller can add one to silence the check of
// unknown WSH_* names).
var variables = map[string]string{
	"WSH_NO_SANDBOX":      "1, true, 0, false",
	"WSH_REQUIRE_SANDBOX": "a boolean (true: the full jail), or the lowest rung accepted: full, landlock, seccomp",
	"WSH_WRITABLE":        "absolute paths of existing directories or files, separated by ':'",
	"WSH_NETWORK":         "none, proxy, host",
	"WSH_ALLOW_HOSTS":     "with WSH_NETWORK=proxy: host names, *.domain, IP addresses ([::1] for IPv6), each with an optional :port, separated by ','",
	"WSH_DENY_HOSTS":      "with WSH_NETWORK=proxy: hosts in the form of WSH_ALLOW_HOSTS that the proxy refuses even where allowed",
	"WSH_HIDE":            "absolute paths, separated by ':'",
	"WSH_UNIX_SOCKETS":    "deny, allow",
	"WSH_HOME":            "overlay, cow, readonly",
	"WSH_PROTECT":         "absolute paths, or paths relative to each writable path, separated by ':'",
	"WSH_JAIL":            "session, command",
}

// An Error is a configuration error; wsh exits with status 2 on one.
type Error struct {
	Var string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Var, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Load reads the configuration from environ (as os.Environ returns it) and
// validates it.
func Load(environ []string) (Config, error) {
	m := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	if err := checkNames(m); err != nil {
		return Config{}, err
	}
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: m}); err != nil {
		return Config{}, fromEnvError(err, m)
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// checkNames refuses unknown WSH_* variables (a typo would otherwise be a
// silent default) and empty values, except an empty list of paths.
func checkNames(m map[string]string) error {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !strings.HasPrefix(k, "WSH_") {
			continue
		}
		accepted, ok := variables[k]
		if !ok {
			return &Error{k, fmt.Errorf("unknown variable; wsh reads %s", strings.Join(known(), ", "))}
		}
		if m[k] == "" && !emptyOK[k] {
			return &Error{k, fmt.Errorf("set but empty; accepted values: %s (or unset it)", accepted)}
		}
	}
	return nil
}

// emptyOK are the lists that may be set empty: no paths, no hosts.
var emptyOK = map[string]bool{"WSH_WRITABLE": true, "WSH_HIDE": true, "WSH_PROTECT": true, "WSH_ALLOW_HOSTS": true, "WSH_DENY_HOSTS": true}

func known() []string {
	var ks []string
	for k := range variables {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// fromEnvError names the variable behind the first error env returns.
func fromEnvError(err error, environ map[string]string) error {
	var agg env.AggregateError
	if errors.As(err, &agg) && len(agg.Errors) > 0 {
		err = agg.Errors[0]
	}
	var pe env.ParseError
	if errors.As(err, &pe) {
		if f, ok := reflect.TypeOf(Config{}).FieldByName(pe.Name); ok {
			k := f.Tag.Get("env")
			what := "a boolean"
			switch f.Type {
			case reflect.TypeOf(Network("")):
				what = "a network mode"
			case reflect.TypeOf(UnixSockets("")):
				what = "a unix socket setting"
			case reflect.TypeOf(HomeMode("")):
				what = "a home mode"
			case reflect.TypeOf(Floor("")):
				what = "a floor"
			case reflect.TypeOf(JailMode("")):
				what = "a jail mode"
			}
			return &Error{k, fmt.Errorf("%q is not %s; accepted values: %s", environ[k], what, variables[k])}
		}
	}
	return &Error{"WSH_*", err}
}

// Validate checks a configuration made in code exactly as Load checks
// one read from the environment, and resolves its paths as Load does. An
// empty Network, UnixSockets or Home is the default. The error is a
// *Error naming the variable.
func (c *Config) Validate() error {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def((*string)(&c.Network), string(NetworkNone))
	def((*string)(&c.UnixSockets), string(UnixDeny))
	def((*string)(&c.Home), string(HomeOverlay))
	def((*string)(&c.Jail), string(JailSession))
	enums := []struct {
		name, value string
		ok          bool
	}{
		{"WSH_NETWORK", string(c.Network), c.Network == NetworkNone || c.Network == NetworkHost || c.Network == NetworkProxy},
		{"WSH_UNIX_SOCKETS", string(c.UnixSockets), c.UnixSockets == UnixDeny || c.UnixSockets == UnixAllow},
		{"WSH_HOME", string(c.Home), c.Home == HomeOverlay || c.Home == HomeCow || c.Home == HomeReadonly},
		{"WSH_JAIL", string(c.Jail), c.Jail == JailSession || c.Jail == JailCommand},
		{"WSH_REQUIRE_SANDBOX", string(c.RequireSandbox), c.RequireSandbox == FloorNone || c.RequireSandbox == FloorFull ||
			c.RequireSandbox == FloorLandlock || c.RequireSandbox == FloorSeccomp},
	}
	for _, e := range enums {
		if !e.ok {
			return &Error{e.name, fmt.Errorf("%q is not one of: %s", e.value, variables[e.name])}
		}
	}
	c.Writable = append([]string(nil), c.Writable...)
	c.Hide = append([]string(nil), c.Hide...)
	c.Protect = append([]string(nil), c.Protect...)
	c.AllowHosts = append([]string(nil), c.AllowHosts...)
	c.DenyHosts = append([]string(nil), c.DenyHosts...)
	return c.validate()
}

func (c *Config) validate() error {
	if c.NoSandbox && c.RequireSandbox != FloorNone {
		return &Error{"WSH_NO_SANDBOX", errors.New("set together with WSH_REQUIRE_SANDBOX; choose one")}
	}
	if c.NoSandbox && c.Home == HomeCow {
		return &Error{"WSH_NO_SANDBOX", errors.New("set together with WSH_HOME=cow, which requires the jail's copy-on-write home; choose one")}
	}
	for i, p := range c.Hide {
		r, err := CheckHidden(p)
		if err != nil {
			return &Error{"WSH_HIDE", err}
		}
		c.Hide[i] = r
	}
	for _, l := range []struct {
		name  string
		hosts []string
	}{{"WSH_ALLOW_HOSTS", c.AllowHosts}, {"WSH_DENY_HOSTS", c.DenyHosts}} {
		if len(l.hosts) > 0 && c.Network != NetworkProxy {
			// Silently unused otherwise: the user would think the list
			// is in force.
			return &Error{l.name, fmt.Errorf("set with WSH_NETWORK=%s; it is read only with WSH_NETWORK=proxy", c.Network)}
		}
		for i, h := range l.hosts {
			r, err := hostrule.Parse(h)
			if err != nil {
				return &Error{l.name, err}
			}
			l.hosts[i] = r.String()
		}
	}
	for _, p := range c.Protect {
		if err := CheckProtected(p); err != nil {
			return &Error{"WSH_PROTECT", err}
		}
	}
	for i, p := range c.Writable {
		r, err := CheckWritable(p)
		if err != nil {
			return &Error{"WSH_WRITABLE", err}
		}
		c.Writable[i] = r
	}
	return nil
}

// CheckWritable checks that p can be a writable path and returns it
// resolved: absolute, existing, not the root, symlinks followed.
func CheckWritable(p string) (string, error) {
	if p == "" || !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%q does not exist", p)
		}
		return "", err
	}
	if r == "/" {
		return "", fmt.Errorf("%q would make the whole host writable", p)
	}
	for _, k := range kernelTrees {
		if r == k || strings.HasPrefix(r, k+"/") {
			// The jail has a /proc, /sys and /dev of its own, so a
			// command could not write the host's there; the shell's own
			// redirections would (a disk's device node, another run's
			// /dev/shm directory).
			return "", fmt.Errorf("%q lies in %s, which the jail has its own of: the shell would write the host's", p, k)
		}
	}
	return r, nil
}

// kernelTrees are the file systems the jail mounts its own of.
var kernelTrees = []string{"/proc", "/sys", "/dev"}

// CheckHidden checks that p can be a hidden path and returns it resolved:
// absolute, symlinks followed where it exists, cleaned where it does not
// (it is then refused by that path).
func CheckHidden(p string) (string, error) {
	if p == "" || !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path (write $HOME/.ssh, not ~/.ssh)", p)
	}
	r, err := filepath.EvalSymlinks(p)
	if errors.Is(err, os.ErrNotExist) {
		// Missing: resolved as far as it exists (/var/run/x is /run/x),
		// the rest as written.
		return resolveExisting(filepath.Clean(p)), nil
	}
	if err != nil {
		return "", err
	}
	if r == "/" {
		return "", fmt.Errorf("%q would hide the whole host", p)
	}
	return r, nil
}

// CheckProtected checks a protected path: absolute, or a relative path of
// names (no "..", no empty or "." component) to match in every writable
// path.
func CheckProtected(p string) error {
	if p == "" {
		return errors.New("an empty path")
	}
	if filepath.IsAbs(p) {
		if filepath.Clean(p) == "/" {
			return fmt.Errorf("%q would protect the whole host", p)
		}
		return nil
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%q is neither an absolute path nor a path of names (no \"..\", \".\" or empty part)", p)
		}
	}
	return nil
}

// resolveExisting is p with its deepest existing ancestor resolved.
func resolveExisting(p string) string {
	rest := ""
	for d := p; d != "/"; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
	return p
}

// Variables returns every variable Load reads, with what it accepts.
func Variables() map[string]string { return maps.Clone(variables) }
