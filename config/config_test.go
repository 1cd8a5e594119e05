package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env  []string
		want Config
	}{
		{nil, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_NO_SANDBOX=1"}, Config{NoSandbox: true, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_NO_SANDBOX=true", "WSH_REQUIRE_SANDBOX=0"}, Config{NoSandbox: true, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_REQUIRE_SANDBOX=true"}, Config{RequireSandbox: FloorFull, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_REQUIRE_SANDBOX=TRUE"}, Config{RequireSandbox: FloorFull, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_REQUIRE_SANDBOX=full"}, Config{RequireSandbox: FloorFull, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_REQUIRE_SANDBOX=landlock"}, Config{RequireSandbox: FloorLandlock, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_REQUIRE_SANDBOX=seccomp"}, Config{RequireSandbox: FloorSeccomp, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_NO_SANDBOX=false"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_UNIX_SOCKETS=allow"}, Config{Network: NetworkNone, UnixSockets: UnixAllow, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_NETWORK=host"}, Config{Network: NetworkHost, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_HOME=readonly"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeReadonly, Jail: JailSession}},
		{[]string{"WSH_PROTECT=.env:/etc/x:a/b"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession, Protect: []string{".env", "/etc/x", "a/b"}}},
		{[]string{"WSH_HOME=overlay"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_HOME=cow"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeCow, Jail: JailSession}},
		{[]string{"WSH_JAIL=command"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailCommand}},
		{[]string{"WSH_JAIL=session"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_NETWORK=none"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_WRITABLE=" + dir + ":" + link}, Config{Writable: []string{dir, dir}, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"OTHER=x", "PATH=/bin"}, Config{Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
		{[]string{"WSH_HIDE=" + link + ":/no/such/../path"}, Config{Hide: []string{dir, "/no/path"}, Network: NetworkNone, UnixSockets: UnixDeny, Home: HomeOverlay, Jail: JailSession}},
	}
	for _, tt := range tests {
		got, err := Load(tt.env)
		if err != nil {
			t.Errorf("Load(%q): %v", tt.env, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Load(%q) = %+v, want %+v", tt.env, got, tt.want)
		}
	}
}

// TestLoadErrors: every malformed value is an *Error that names the
// variable, and says what is accepted.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		env      string
		variable string
		says     string
	}{
		{"WSH_NO_SANDBOX=yes", "WSH_NO_SANDBOX", "1, true, 0, false"},
		{"WSH_NO_SANDBOX=on", "WSH_NO_SANDBOX", "1, true, 0, false"},
		{"WSH_NO_SANDBOX= true", "WSH_NO_SANDBOX", "1, true, 0, false"},
		{"WSH_NO_SANDBOX=", "WSH_NO_SANDBOX", "empty"},
		{"WSH_REQUIRE_SANDBOX=2", "WSH_REQUIRE_SANDBOX", "a boolean (true: the full jail), or the lowest rung accepted: full, landlock, seccomp"},
		{"WSH_REQUIRE_SANDBOX=", "WSH_REQUIRE_SANDBOX", "full, landlock, seccomp"},
		{"WSH_REQUIRE_SANDBOX=none", "WSH_REQUIRE_SANDBOX", "full, landlock, seccomp"},
		{"WSH_NETWORK=bridge", "WSH_NETWORK", "none, proxy, host"},
		{"WSH_NETWORK=", "WSH_NETWORK", "none, proxy, host"},
		{"WSH_WRITABLE=relative/dir", "WSH_WRITABLE", "not an absolute path"},
		{"WSH_WRITABLE=/does/not/exist", "WSH_WRITABLE", "does not exist"},
		{"WSH_WRITABLE=/", "WSH_WRITABLE", "whole host"},
		{"WSH_WRITABLE=/dev", "WSH_WRITABLE", "lies in /dev"},
		{"WSH_WRITABLE=/dev/shm", "WSH_WRITABLE", "lies in /dev"},
		{"WSH_WRITABLE=/proc/self", "WSH_WRITABLE", "lies in /proc"},
		{"WSH_WRITABLE=/sys/fs", "WSH_WRITABLE", "lies in /sys"},
		{"WSH_NO_SANDBX=1", "WSH_NO_SANDBX", "unknown variable"},
		{"WSH_HIDE=.ssh", "WSH_HIDE", "not an absolute path"},
		{"WSH_HIDE=~/.ssh", "WSH_HIDE", "not an absolute path"},
		{"WSH_HIDE=/", "WSH_HIDE", "whole host"},
		{"WSH_UNIX_SOCKETS=yes", "WSH_UNIX_SOCKETS", "deny, allow"},
		{"WSH_UNIX_SOCKETS=", "WSH_UNIX_SOCKETS", "deny, allow"},
		{"WSH_HOME=rw", "WSH_HOME", `"rw" is not a home mode; accepted values: overlay, cow, readonly`},
		{"WSH_HOME=Overlay", "WSH_HOME", "overlay, cow, readonly"},
		{"WSH_HOME=", "WSH_HOME", "set but empty; accepted values: overlay, cow, readonly"},
		{"WSH_JAIL=per-command", "WSH_JAIL", `"per-command" is not a jail mode; accepted values: session, command`},
		{"WSH_JAIL=Session", "WSH_JAIL", "session, command"},
		{"WSH_JAIL=", "WSH_JAIL", "set but empty; accepted values: session, command"},
		{"WSH_PROTECT=../x", "WSH_PROTECT", "neither an absolute path nor a path of names"},
		{"WSH_PROTECT=a//b", "WSH_PROTECT", "neither an absolute path"},
		{"WSH_PROTECT=/", "WSH_PROTECT", "whole host"},
	}
	for _, tt := range tests {
		_, err := Load([]string{tt.env})
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("Load(%q) = %v, want a *config.Error", tt.env, err)
			continue
		}
		if ce.Var != tt.variable || !strings.Contains(err.Error(), tt.variable) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Load(%q) = %q (var %q), want it to name %s and say %q", tt.env, err, ce.Var, tt.variable, tt.says)
		}
	}
}

func TestBothSetIsAnError(t *testing.T) {
	_, err := Load([]string{"WSH_NO_SANDBOX=1", "WSH_REQUIRE_SANDBOX=1"})
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "WSH_REQUIRE_SANDBOX") {
		t.Fatalf("Load with both set = %v, want an error naming both", err)
	}
}

// TestNoSandboxAndCowIsAnError: WSH_HOME=cow requires the jail's home,
// which an opted-out run has not.
func TestNoSandboxAndCowIsAnError(t *testing.T) {
	_, err := Load([]string{"WSH_NO_SANDBOX=1", "WSH_HOME=cow"})
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "WSH_HOME=cow") {
		t.Fatalf("Load with both set = %v, want an error naming both", err)
	}
	if _, err := Load([]string{"WSH_NO_SANDBOX=1", "WSH_HOME=overlay"}); err != nil {
		t.Errorf("WSH_NO_SANDBOX with WSH_HOME=overlay: %v", err)
	}
}

// TestHiddenMissingBeneathASymlink: a missing hidden path is resolved as
// far as it exists, so that the jail can find it by a path with no
// symlink in it (a missing /var/run/x is /run/x).
func TestHiddenMissingBeneathASymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	got, err := CheckHidden(filepath.Join(dir, "link", "missing", "key"))
	if want := filepath.Join(real, "real", "missing", "key"); err != nil || got != want {
		t.Errorf("CheckHidden = %q, %v, want %q", got, err, want)
	}
}

// TestVariablesIsACopy: adding to what Variables returns does not make a
// misspelt variable known.
func TestVariablesIsACopy(t *testing.T) {
	Variables()["WSH_NO_SANDBX"] = "1"
	if _, err := Load([]string{"WSH_NO_SANDBX=1"}); err == nil {
		t.Error("a misspelt variable was accepted after a caller added it to Variables()")
	}
}

// TestHosts: WSH_ALLOW_HOSTS and WSH_DENY_HOSTS are read with
// WSH_NETWORK=proxy only, each entry normalised, from the environment and
// from a Config made in code alike.
func TestHosts(t *testing.T) {
	c, err := Load([]string{"WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS=Example.COM., *.Golang.org:443,10.0.0.1:8080,[0:0::1]", "WSH_DENY_HOSTS=bad.golang.org"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"example.com", "*.golang.org:443", "10.0.0.1:8080", "[::1]"}
	if strings.Join(c.AllowHosts, ",") != strings.Join(want, ",") || len(c.DenyHosts) != 1 {
		t.Errorf("AllowHosts %q DenyHosts %q, want %q and one", c.AllowHosts, c.DenyHosts, want)
	}
	if c, err := Load([]string{"WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS="}); err != nil || len(c.AllowHosts) != 0 {
		t.Errorf("an empty WSH_ALLOW_HOSTS: %q %v, want no host and no error", c.AllowHosts, err)
	}
	for _, tt := range []struct {
		cfg      Config
		variable string
		says     string
	}{
		{Config{AllowHosts: []string{"example.com"}}, "WSH_ALLOW_HOSTS", "set with WSH_NETWORK=none"},
		{Config{Network: NetworkHost, DenyHosts: []string{"example.com"}}, "WSH_DENY_HOSTS", "set with WSH_NETWORK=host"},
		{Config{Network: NetworkProxy, AllowHosts: []string{"*"}}, "WSH_ALLOW_HOSTS", `"*"`},
		{Config{Network: NetworkProxy, AllowHosts: []string{"*.com:99999"}}, "WSH_ALLOW_HOSTS", "not a port"},
		{Config{Network: NetworkProxy, AllowHosts: []string{"0x7f.1"}}, "WSH_ALLOW_HOSTS", "not a host name"},
		{Config{Network: NetworkProxy, AllowHosts: []string{"[fe80::1%eth0]"}}, "WSH_ALLOW_HOSTS", "not an IPv6 address"},
		{Config{Network: NetworkProxy, AllowHosts: []string{"a..b"}}, "WSH_ALLOW_HOSTS", "not a label"},
		{Config{Network: NetworkProxy, DenyHosts: []string{"-a.com"}}, "WSH_DENY_HOSTS", "not a label"},
	} {
		cfg := tt.cfg
		err := cfg.Validate()
		var ce *Error
		if !errors.As(err, &ce) || ce.Var != tt.variable || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s that says %q", tt.cfg, err, tt.variable, tt.says)
		}
	}
	in := []string{"A.example"}
	cfg := Config{Network: NetworkProxy, AllowHosts: in}
	if err := cfg.Validate(); err != nil || cfg.AllowHosts[0] != "a.example" || in[0] != "A.example" {
		t.Errorf("Validate: %v %q (the caller's %q), want it normalised in a copy", err, cfg.AllowHosts, in)
	}
}
