//go:build linux && cgo

package jailer

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// newProxy is the proxy of a Jailer whose jails have a network of their
// own: with WSH_NETWORK=proxy it connects to what the lists allow; with
// none it refuses every request at once, so that a tool that honours
// HTTP_PROXY stops at once and says why, instead of retrying a lookup
// that cannot succeed. Each host refused is said once on warn.
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
func (j *Jailer) Blocked() []netproxy.Refusal {
	if j.proxy == nil {
		return nil
	}
	return j.proxy.Refused()
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

// lowerProxy says that jails of rung reach the proxy with no network
// namespace: WSH_NETWORK=proxy on the landlock rung with Landlock ABI 4,
// where a command may connect to the proxy's port on the host's loopback
// and nowhere else (and, Landlock's rule being a port's, to that port on
// any address: the warning says so). Below ABI 4, and on the seccomp
// rung, commands have no network.
func (j *Jailer) lowerProxy(rung degrade.Rung) bool {
	return j.proxy != nil && j.cfg.Network == config.NetworkProxy && rung == degrade.RungLandlock && landlockABI() >= 4
}

// hostProxyPort is the port of the proxy's listener on the host's
// loopback, for the landlock rung: started once, served until the proxy
// is closed.
func (j *Jailer) hostProxyPort() (uint16, error) {
	j.hostProxy.once.Do(func() {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			j.hostProxy.err = fmt.Errorf("the proxy's listener: %w", err)
			return
		}
		j.hostProxy.port = uint16(l.Addr().(*net.TCPAddr).Port)
		go j.proxy.Serve(l)
	})
	return j.hostProxy.port, j.hostProxy.err
}

// proxyWithheld is what the warning of a degraded Jailer says of
// WSH_NETWORK=proxy, when it is asked for: what of it holds on the rung
// in force.
func (j *Jailer) proxyWithheld() string {
	if j.cfg.Network != config.NetworkProxy || j.rung == degrade.RungFull {
		return ""
	}
	switch {
	case j.lowerProxy(j.rung):
		p := j.hostProxy.port
		return fmt.Sprintf("with WSH_NETWORK=proxy, commands reach the proxy on the host's loopback (127.0.0.1:%d) and "+
			"make no other TCP connection, listen on no socket (unix ones included) and make no UDP or other socket but "+
			"unix ones; Landlock's rule is a port's, though, so "+
			"port %d on any other address is in reach too, past the proxy", p, p)
	case j.rung == degrade.RungNone:
		return "WSH_NETWORK=proxy is not in force: commands have the host's network"
	}
	return "WSH_NETWORK=proxy is withheld: without Landlock's TCP rules (ABI 4) nothing can keep a connection to the proxy, " +
		"so commands have no network, as with WSH_NETWORK=none"
}

// proxyPort is the proxy's port for a jail of rung: in its own network
// namespace on the full rung, on the host's loopback on the landlock rung
// (lowerProxy), or 0: no proxy.
func (j *Jailer) proxyPort(rung degrade.Rung) uint16 {
	switch {
	case j.proxy == nil:
		return 0
	case rung == degrade.RungFull:
		return jailProxyPort
	case j.lowerProxy(rung):
		return j.hostProxy.port // hostProxyPort was called by compileFilter
	}
	return 0
}

// jailEnv is env for a command in a jail of rung: pointed at the proxy
// where the jail has one. What env said of a proxy is replaced: the
// host's proxy is not reachable from the jail.
func (j *Jailer) jailEnv(env []string, rung degrade.Rung) []string {
	port := j.proxyPort(rung)
	if port == 0 {
		return env
	}
	url := "http://127.0.0.1:" + strconv.Itoa(int(port))
	out := make([]string, 0, len(env)+len(proxyVars)+len(noProxyVars))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(proxyVars, k) && !contains(noProxyVars, k) {
			out = append(out, kv)
		}
	}
	for _, k := range proxyVars {
		out = append(out, k+"="+url)
	}
	for _, k := range noProxyVars {
		out = append(out, k+"=localhost,127.0.0.1,::1")
	}
	if _, set := lookupEnvOK(env, "PIP_RETRIES"); j.cfg.Network == config.NetworkNone && !set {
		// pip retries a refused tunnel five times, for about ten
		// seconds; with no network there is nothing to retry.
		out = append(out, "PIP_RETRIES=0")
	}
	return out
}

// A bridge is a jail's way to the proxy: the init listens in the jail's
// network namespace and sends the listener over a socket pair, whose
// other end the bridge reads; the proxy then serves that listener, from
// wsh's process. No command holds the pair (the init closes its end
// before any runs), and no path in any file system leads to it.
type bridge struct {
	ours   *net.UnixConn
	theirs *os.File
	done   chan struct{}

	mu     sync.Mutex
	l      net.Listener
	closed bool
}

// attachProxy gives req, a full rung's jail, the proxy: the port it
// listens on and the init's end of the bridge. It returns the bridge,
// to close once the jail has ended, or nil with no proxy.
func (j *Jailer) attachProxy(req *launch.Request) (*bridge, error) {
	if j.proxy == nil || req.Spec.Rung != degrade.RungFull {
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
	b := &bridge{ours: c.(*net.UnixConn), theirs: os.NewFile(uintptr(fds[1]), "wsh-proxy-init"), done: make(chan struct{})}
	req.Spec.ProxyPort, req.Proxy = jailProxyPort, b.theirs
	go b.serve(j.proxy)
	return b, nil
}

// serve waits for the init's listener and serves it until the bridge
// is closed.
func (b *bridge) serve(p *netproxy.Proxy) {
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
func (b *bridge) receive() (net.Listener, error) {
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

// close stops serving the jail's listener (what it accepted ends with
// the jail's processes) and waits for the bridge's goroutine.
func (b *bridge) close() {
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
