//go:build linux && cgo

package jailnet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"wsh/config"
	"wsh/degrade"
	"wsh/internal/hostrule"
	"wsh/internal/launch"
	"wsh/internal/netproxy"
)

// jailProxyPort is where wsh's proxy listens in a jail's network
// namespace (127.0.0.1): below 1024, so that no command, every capability
// dropped, can listen there instead.
const jailProxyPort = 900

// A Network is the network of a Runner's jails: with WSH_NETWORK=proxy
// or none, wsh's proxy, which a full rung's jail reaches on its own
// loopback (a Bridge) and a landlock rung's on the host's; with host, or
// opted out, none of wsh's. It is safe for concurrent use.
type Network struct {
	network     config.Network
	proxy       *netproxy.Proxy
	landlockABI int
	host        struct { // the proxy's listener on the host's loopback (Lower)
		once sync.Once
		port uint16
		err  error
	}
}

// New is the network of cfg's jails, with the kernel's Landlock ABI
// (0: none). Its proxy, if any, holds nothing until a jail's init hands
// it a listener (Attach) or a landlock rung asks for one (HostPort).
func New(cfg config.Config, warn io.Writer, landlockABI int) (*Network, error) {
	n := &Network{network: cfg.Network, landlockABI: landlockABI}
	var err error
	n.proxy, err = newProxy(cfg, warn)
	return n, err
}

// newProxy is the proxy of jails that have a network of their own: with
// WSH_NETWORK=proxy it connects to what the lists allow; with none it
// refuses every request at once, so that a tool that honours HTTP_PROXY
// stops at once and says why, instead of retrying a lookup that cannot
// succeed. Each host refused is said once on warn.
func newProxy(cfg config.Config, warn io.Writer) (*netproxy.Proxy, error) {
	if cfg.NoSandbox || cfg.Network == config.NetworkHost {
		return nil, nil
	}
	allow, err := hostrule.ParseAll(cfg.AllowHosts)
	if err != nil {
		return nil, &config.Error{Var: "WSH_ALLOW_HOSTS", Err: err}
	}
	deny, err := hostrule.ParseAll(cfg.DenyHosts)
	if err != nil {
		return nil, &config.Error{Var: "WSH_DENY_HOSTS", Err: err}
	}
	var mu sync.Mutex
	return netproxy.New(netproxy.Config{
		Allow:    allow,
		Deny:     deny,
		None:     cfg.Network == config.NetworkNone,
		MaxConns: maxProxyConns(),
		OnRefusal: func(r netproxy.Refusal) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(warn, "wsh: the proxy refused a command: %s\n", r.Reason)
		},
	}), nil
}

// maxProxyConns bounds the proxy's connections at once to an eighth of
// wsh's descriptors (a tunnel holds four), from 16 to 512: the commands of
// a run can use up the proxy, not wsh.
func maxProxyConns() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 16
	}
	return int(min(max(rl.Cur/8, 16), 512))
}

// Blocked returns the hosts the proxy refused, in the order of their
// first refusal.
func (n *Network) Blocked() []netproxy.Refusal {
	if n.proxy == nil {
		return nil
	}
	return n.proxy.Refused()
}

// Close ends the proxy and what it still serves.
func (n *Network) Close() error {
	if n.proxy == nil {
		return nil
	}
	return n.proxy.Close()
}

// proxyVars are the variables that point a command at the proxy: the
// usual ones in both cases, and those of the tools that do not read
// them (npm does, but its own settings in ~/.npmrc would win over them).
var proxyVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
	"PIP_PROXY", "CARGO_HTTP_PROXY",
}

// noProxyVars keep loopback out of the proxy: a command's own servers
// are in its jail.
var noProxyVars = []string{"NO_PROXY", "no_proxy", "npm_config_noproxy"}

// Lower says that jails of rung reach the proxy with no network
// namespace: WSH_NETWORK=proxy on the landlock rung with Landlock ABI 4,
// where a command may connect to the proxy's port on the host's loopback
// and nowhere else (and, Landlock's rule being a port's, to that port on
// any address: the warning says so). Below ABI 4, and on the seccomp
// rung, commands have no network.
func (n *Network) Lower(rung degrade.Rung) bool {
	return n.proxy != nil && n.network == config.NetworkProxy && rung == degrade.RungLandlock && n.landlockABI >= 4
}

// HostPort is the port of the proxy's listener on the host's
// loopback, for the landlock rung: started once, served until the proxy
// is closed.
func (n *Network) HostPort() (uint16, error) {
	n.host.once.Do(func() {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			n.host.err = fmt.Errorf("the proxy's listener: %w", err)
			return
		}
		n.host.port = uint16(l.Addr().(*net.TCPAddr).Port)
		go n.proxy.Serve(l)
	})
	return n.host.port, n.host.err
}

// Withheld is what the warning of a degraded Runner says of
// WSH_NETWORK=proxy, when it is asked for: what of it holds on rung, the
// rung in force.
func (n *Network) Withheld(rung degrade.Rung) string {
	if n.network != config.NetworkProxy || rung == degrade.RungFull {
		return ""
	}
	switch {
	case n.Lower(rung):
		p := n.host.port
		return fmt.Sprintf("with WSH_NETWORK=proxy, commands reach the proxy on the host's loopback (127.0.0.1:%d) and "+
			"make no other TCP connection, listen on no socket (unix ones included) and make no UDP or other socket but "+
			"unix ones; Landlock's rule is a port's, though, so "+
			"port %d on any other address is in reach too, past the proxy", p, p)
	case rung == degrade.RungNone:
		return "WSH_NETWORK=proxy is not in force: commands have the host's network"
	}
	return "WSH_NETWORK=proxy is withheld: without Landlock's TCP rules (ABI 4) nothing can keep a connection to the proxy, " +
		"so commands have no network, as with WSH_NETWORK=none"
}

// Port is the proxy's port for a jail of rung: in its own network
// namespace on the full rung, on the host's loopback on the landlock rung
// (Lower), or 0: no proxy.
func (n *Network) Port(rung degrade.Rung) uint16 {
	switch {
	case n.proxy == nil:
		return 0
	case rung == degrade.RungFull:
		return jailProxyPort
	case n.Lower(rung):
		return n.host.port // HostPort was called before any command ran
	}
	return 0
}

// Env is env for a command in a jail of rung: pointed at the proxy where
// the jail has one. What env said of a proxy is replaced: the host's
// proxy is not reachable from the jail.
func (n *Network) Env(env []string, rung degrade.Rung) []string {
	port := n.Port(rung)
	if port == 0 {
		return env
	}
	url := "http://127.0.0.1:" + strconv.Itoa(int(port))
	out := make([]string, 0, len(env)+len(proxyVars)+len(noProxyVars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(proxyVars, k) && !slices.Contains(noProxyVars, k) {
			out = append(out, kv)
		}
	}
	for _, k := range proxyVars {
		out = append(out, k+"="+url)
	}
	for _, k := range noProxyVars {
		out = append(out, k+"=localhost,127.0.0.1,::1")
	}
	if !hasVar(env, "PIP_RETRIES") && n.network == config.NetworkNone {
		// pip retries a refused tunnel five times, for about ten
		// seconds; with no network there is nothing to retry.
		out = append(out, "PIP_RETRIES=0")
	}
	return out
}

// A Bridge is a jail's way to the proxy: the init listens in the jail's
// network namespace and sends the listener over a socket pair, whose
// other end the bridge reads; the proxy then serves that listener, from
// wsh's process. No command holds the pair (the init closes its end
// before any runs), and no path in any file system leads to it.
type Bridge struct {
	ours   *net.UnixConn
	theirs *os.File
	done   chan struct{}

	mu     sync.Mutex
	l      net.Listener
	closed bool
}

// Attach gives req, a full rung's jail, the proxy: the port it listens on
// and the init's end of the bridge. It returns the bridge, to close once
// the jail has ended, or nil with no proxy.
func (n *Network) Attach(req *launch.Request) (*Bridge, error) {
	if n.proxy == nil || req.Spec.Rung != degrade.RungFull {
		return nil, nil
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the proxy's socket pair: %w", os.NewSyscallError("socketpair", err))
	}
	f := os.NewFile(uintptr(fds[0]), "wsh-proxy")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, fmt.Errorf("the proxy's socket pair: %w", err)
	}
	b := &Bridge{ours: c.(*net.UnixConn), theirs: os.NewFile(uintptr(fds[1]), "wsh-proxy-init"), done: make(chan struct{})}
	req.Spec.ProxyPort, req.Proxy = jailProxyPort, b.theirs
	go b.serve(n.proxy)
	return b, nil
}

// serve waits for the init's listener and serves it until the bridge
// is closed.
func (b *Bridge) serve(p *netproxy.Proxy) {
	defer close(b.done)
	l, err := b.receive()
	if err != nil {
		return // the init failed before, or the jail was not made
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		l.Close()
		return
	}
	b.l = l
	b.mu.Unlock()
	p.Serve(l)
}

// receive reads the one listener the init sends.
func (b *Bridge) receive() (net.Listener, error) {
	oob := make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := b.ours.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			got, _ := unix.ParseUnixRights(&m)
			fds = append(fds, got...)
		}
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("the init sent no listener")
	}
	f := os.NewFile(uintptr(fds[0]), "wsh-proxy-listener")
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	if _, ok := l.(*net.TCPListener); !ok {
		l.Close()
		return nil, errors.New("the init sent no TCP listener")
	}
	return l, nil
}

// Close stops serving the jail's listener (what it accepted ends with
// the jail's processes) and waits for the bridge's goroutine. A nil
// Bridge (no proxy) does nothing.
func (b *Bridge) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.closed = true
	if b.l != nil {
		b.l.Close()
	}
	b.mu.Unlock()
	b.ours.Close()
	b.theirs.Close()
	<-b.done
}

// hasVar says whether env sets key.
func hasVar(env []string, key string) bool {
	return slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}
