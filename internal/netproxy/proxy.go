// Package netproxy is wsh's network proxy: the only way out of a jail
// with WSH_NETWORK=proxy (and, refusing everything, with none). It
// serves HTTP CONNECT tunnels and plain http:// forwarding in wsh's own
// process, on listeners a jail's init hands over from inside its network
// namespace (docs/sandbox.md, "Network").
//
// Policy: deny wins over allow; a name is allowed only as the allowlist
// names it; the proxy resolves the name itself, refuses every loopback,
// private, link-local and other special address unless the allowlist
// names that exact address, and connects to the address it checked. There
// is no TLS interception: what a tunnel carries is the client's.
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wsh/internal/hostrule"
)

// Header is the response header that says a response is the proxy's own.
const Header = "X-Wsh-Proxy"

// A Config is what a Proxy allows.
type Config struct {
	// Allow and Deny are WSH_ALLOW_HOSTS and WSH_DENY_HOSTS.
	Allow, Deny []hostrule.Rule
	// None refuses every request, and dials nothing: WSH_NETWORK=none,
	// where the proxy is there only to say so at once.
	None bool
	// Lookup resolves a name; nil is net.DefaultResolver's LookupNetIP.
	Lookup func(ctx context.Context, name string) ([]netip.Addr, error)
	// DialTimeout bounds each connection to a host (0: 10 s).
	DialTimeout time.Duration
	// OnRefusal, if set, is called the first time each host and port is
	// refused, from the request's goroutine.
	OnRefusal func(Refusal)
	// MaxConns bounds the connections served at once, over every
	// listener (0: 512): past it, the next is accepted when one ends, so
	// that no command can use up wsh's descriptors.
	MaxConns int
	// TunnelLinger is how long a tunnel's other direction may go on once
	// one direction has ended (0: 10 s): a command that exited leaves no
	// tunnel open on the word of a server that never closes.
	TunnelLinger time.Duration
	// WriteStall is how long a write to either end of a connection may
	// make no progress (0: 60 s) before the connection, and what it is
	// attached to, is closed: a peer that stops reading holds nothing of
	// the proxy for ever.
	WriteStall time.Duration
	// ForwardIdle is how long a forwarded request's upstream may send
	// nothing (0: 2 min), its headers as its body.
	ForwardIdle time.Duration
}

// A Refusal is a host and port the proxy refused, why, and how often.
type Refusal struct {
	Host   string
	Port   uint16
	Reason string
	Count  int
}

// A Proxy serves the listeners it is given until it is closed.
type Proxy struct {
	cfg       Config
	srv       *http.Server
	transport *http.Transport
	forward   *httputil.ReverseProxy

	slots chan struct{} // one per connection served (MaxConns)

	mu      sync.Mutex
	refused []Refusal
	index   map[string]int
	conns   map[*servedConn]struct{} // every connection accepted, hijacked ones included
	tunnels map[net.Conn]struct{}    // the upstream end of every open tunnel
	closed  bool
	wg      sync.WaitGroup // the tunnels' copies
}

// New makes a proxy; it serves nothing until Serve.
func New(cfg Config) *Proxy {
	if cfg.Lookup == nil {
		cfg.Lookup = func(ctx context.Context, name string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", name)
		}
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 512
	}
	if cfg.TunnelLinger <= 0 {
		cfg.TunnelLinger = 10 * time.Second
	}
	if cfg.WriteStall <= 0 {
		cfg.WriteStall = 60 * time.Second
	}
	if cfg.ForwardIdle <= 0 {
		cfg.ForwardIdle = 2 * time.Minute
	}
	p := &Proxy{cfg: cfg, index: map[string]int{}, conns: map[*servedConn]struct{}{}, tunnels: map[net.Conn]struct{}{},
		slots: make(chan struct{}, cfg.MaxConns)}
	p.transport = &http.Transport{
		// Never the proxy of wsh's own environment: the connection must
		// go to the address that was checked.
		Proxy: nil,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, err := splitHostPort(addr, 80)
			if err != nil {
				return nil, err
			}
			sc, _ := ctx.Value(servedKey{}).(*servedConn)
			if sc != nil {
				// The Transport dials on a context of its own, which the
				// client's end does not cancel: this one is.
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go func() {
					select {
					case <-sc.gone:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			up, err := p.dial(ctx, host, port)
			if err != nil {
				return nil, err
			}
			// The upstream connection is the client's: it ends with it,
			// and a response that sends nothing for ForwardIdle ends
			// (the client's end is not seen while it has pipelined
			// bytes unread).
			if sc != nil {
				sup := sc.attach(up, p.cfg.ForwardIdle).(*stallConn)
				if h, ok := ctx.Value(upstreamKey{}).(*upstreamHolder); ok {
					h.set(sup)
				}
				return sup, nil
			}
			sup := &stallConn{Conn: up, stall: p.cfg.WriteStall}
			sup.idle.Store(int64(p.cfg.ForwardIdle))
			if h, ok := ctx.Value(upstreamKey{}).(*upstreamHolder); ok {
				h.set(sup)
			}
			return sup, nil
		},
		// One upstream connection per request, never shared between
		// clients: each ends with the client that made it.
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: cfg.ForwardIdle,
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport:    p.transport,
		ErrorLog:     log.New(io.Discard, "", 0),
		ErrorHandler: p.forwardError,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				// Upgraded: a tunnel now, whose silences are its own.
				if h, ok := resp.Request.Context().Value(upstreamKey{}).(*upstreamHolder); ok {
					h.noIdle()
				}
			}
			return nil
		},
	}
	p.srv = &http.Server{
		Handler: p,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, servedKey{}, c)
		},
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	return p
}

// Serve serves l until l or the proxy is closed, and then closes every
// connection it accepted from l: a jail's listener is closed when the
// jail ends, and nothing of the jail is left to use them. It returns nil
// then.
func (p *Proxy) Serve(l net.Listener) error {
	sl := &servingListener{Listener: l, p: p}
	err := p.srv.Serve(sl)
	p.closeConns(sl)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Close closes every listener and connection, tunnels and upgraded
// connections included, and waits for the tunnels' copies to end.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.closeConns(nil)
	p.wg.Wait()
	p.transport.CloseIdleConnections()
	return err
}

// closeConns closes the connections accepted from l (all, for nil),
// and the upstream ends of their tunnels.
func (p *Proxy) closeConns(l *servingListener) {
	p.mu.Lock()
	var cs []*servedConn
	for c := range p.conns {
		if l == nil || c.from == l {
			cs = append(cs, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.Close() // its tunnel's copy then closes the upstream end
	}
	if l == nil {
		p.mu.Lock()
		for c := range p.tunnels {
			c.Close()
		}
		p.mu.Unlock()
	}
}

// A servingListener records each connection it accepts, and refuses one
// past MaxConns at once: answered with a 503, closed.
type servingListener struct {
	net.Listener
	p *Proxy
}

func (l *servingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.p.slots <- struct{}{}:
		default:
			c.SetWriteDeadline(time.Now().Add(time.Second))
			msg := fmt.Sprintf("wsh's proxy: more than %d connections at once\n", cap(l.p.slots))
			fmt.Fprintf(c, "HTTP/1.1 503 %s\r\n%s: error\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", strings.TrimSpace(msg), Header, len(msg), msg)
			c.Close()
			continue
		}
		sc := &servedConn{stallConn: stallConn{Conn: c, stall: l.p.cfg.WriteStall}, p: l.p, from: l,
			attached: map[*stallConn]struct{}{}, gone: make(chan struct{})}
		l.p.mu.Lock()
		closed := l.p.closed
		if !closed {
			l.p.conns[sc] = struct{}{}
		}
		l.p.mu.Unlock()
		if closed {
			sc.Close()
			return nil, net.ErrClosed
		}
		return sc, nil
	}
}

// servedKey is the context key of the request's servedConn.
type servedKey struct{}

// upstreamKey is the context key of a forwarded request's upstreamHolder:
// the upstream connection dialed for it, which an upgrade frees of its
// idle bound.
type upstreamKey struct{}

type upstreamHolder struct {
	mu   sync.Mutex
	conn *stallConn
}

func (h *upstreamHolder) set(c *stallConn) {
	h.mu.Lock()
	h.conn = c
	h.mu.Unlock()
}

func (h *upstreamHolder) noIdle() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		h.conn.noIdle()
	}
}

// A servedConn is a client's connection: its writes may stall for
// WriteStall at most, it closes the upstream connections attached to
// it when it closes, and then gives its slot back.
type servedConn struct {
	stallConn
	p    *Proxy
	from *servingListener
	once sync.Once

	mu       sync.Mutex
	attached map[*stallConn]struct{}
	closed   bool
	gone     chan struct{} // closed with the connection: its dials end
}

// attach makes up end with c (closed at once if c is), and returns it
// with its writes bounded (a stall closes c too) and, with idle, its
// reads: a forwarded response that sends nothing for idle ends. Closed,
// it is c's no more.
func (c *servedConn) attach(up net.Conn, idle time.Duration) net.Conn {
	sup := &stallConn{Conn: up, stall: c.stall, onStall: func() { c.Close() }}
	sup.idle.Store(int64(idle))
	sup.onClose = func() {
		c.mu.Lock()
		delete(c.attached, sup)
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		up.Close()
	} else {
		c.attached[sup] = struct{}{}
	}
	return sup
}

func (c *servedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		var up []*stallConn
		for u := range c.attached {
			up = append(up, u)
		}
		c.mu.Unlock()
		close(c.gone)
		for _, u := range up {
			u.Close()
		}
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
		<-c.p.slots
	})
	return err
}

// A stallConn closes itself (and calls onStall) when a write makes no
// progress for stall, and, with idle, ends a read that gets nothing for
// idle.
type stallConn struct {
	net.Conn
	stall     time.Duration
	idle      atomic.Int64 // nanoseconds; 0: reads wait as long as they must
	lastWrite atomic.Int64 // unix nanoseconds of the last write's progress
	onStall   func()
	onClose   func()
}

// Read waits idle at most while nothing is written either: a request
// still being sent (a slow upload) keeps its response's wait going.
func (c *stallConn) Read(b []byte) (int, error) {
	for {
		idle := time.Duration(c.idle.Load())
		if idle <= 0 {
			// No bound of ours: the deadlines others set (the server's,
			// a tunnel's linger) are theirs.
			return c.Conn.Read(b)
		}
		c.Conn.SetReadDeadline(time.Now().Add(idle))
		n, err := c.Conn.Read(b)
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && time.Since(time.Unix(0, c.lastWrite.Load())) < idle {
			continue
		}
		return n, err
	}
}

// noIdle lifts the idle bound: an upgraded connection is a tunnel.
func (c *stallConn) noIdle() {
	c.idle.Store(0)
	c.Conn.SetReadDeadline(time.Time{})
}

func (c *stallConn) Close() error {
	err := c.Conn.Close()
	if c.onClose != nil {
		c.onClose()
	}
	return err
}

func (c *stallConn) Write(b []byte) (int, error) {
	done := 0
	for {
		c.Conn.SetWriteDeadline(time.Now().Add(c.stall))
		n, err := c.Conn.Write(b[done:])
		done += n
		if n > 0 {
			c.lastWrite.Store(time.Now().UnixNano())
		}
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return done, err
		}
		if n > 0 {
			continue // slow, but going: another stall's time
		}
		c.Conn.Close()
		if c.onStall != nil {
			c.onStall()
		}
		return done, err
	}
}

// CloseWrite ends the connection's writing half.
func (c *stallConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// Refused returns the hosts refused so far, in the order of their first
// refusal.
func (p *Proxy) Refused() []Refusal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Refusal(nil), p.refused...)
}

// A refusal is a request the policy refuses: a 403, and a record.
type refusal struct {
	host   string
	port   uint16
	reason string
}

func (r *refusal) Error() string { return "blocked by wsh: " + r.reason }

func (p *Proxy) refuse(host string, port uint16, reason string) *refusal {
	key := net.JoinHostPort(host, strconv.Itoa(int(port)))
	p.mu.Lock()
	i, seen := p.index[key]
	if !seen {
		i = len(p.refused)
		p.index[key] = i
		p.refused = append(p.refused, Refusal{Host: host, Port: port, Reason: reason})
	}
	p.refused[i].Count++
	p.mu.Unlock()
	if !seen && p.cfg.OnRefusal != nil {
		p.cfg.OnRefusal(Refusal{Host: host, Port: port, Reason: reason, Count: 1})
	}
	return &refusal{host, port, reason}
}

// check applies the lists to what was asked for, before any lookup. It
// returns the address when host is one.
func (p *Proxy) check(host string, port uint16) (netip.Addr, string, *refusal) {
	if p.cfg.None {
		return netip.Addr{}, "", p.refuse(host, port, "commands have no network (WSH_NETWORK=none)"+noneHint(host, port))
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		// An address with a trailing dot is the address.
		a, err = netip.ParseAddr(strings.TrimSuffix(host, "."))
	}
	if err == nil {
		if a.Zone() != "" {
			return netip.Addr{}, "", p.refuse(host, port, host+" has a zone, which no entry names")
		}
		a = a.Unmap()
		if matchAddr(p.cfg.Deny, a, port) {
			return netip.Addr{}, "", p.refuse(a.String(), port, hostPort(a.String(), port)+" is in WSH_DENY_HOSTS")
		}
		if p.denied(a, port) {
			return netip.Addr{}, "", p.refuse(a.String(), port, hostPort(a.String(), port)+" carries "+carried(a).String()+
				", which is in WSH_DENY_HOSTS")
		}
		if !matchAddr(p.cfg.Allow, a, port) {
			return netip.Addr{}, "", p.refuse(a.String(), port, hostPort(a.String(), port)+" is not in WSH_ALLOW_HOSTS")
		}
		return a, "", nil
	}
	name, err := hostrule.Normalize(host)
	if err != nil {
		return netip.Addr{}, "", p.refuse(host, port, fmt.Sprintf("%q is not a host name: %v", host, err))
	}
	if hostrule.LooksNumeric(name) {
		// 10.1 or 0x7f.1: an address to some resolvers, no name to any
		// entry.
		return netip.Addr{}, "", p.refuse(name, port, name+" is a numeric form of an address, which no entry names")
	}
	if matchName(p.cfg.Deny, name, port) {
		return netip.Addr{}, "", p.refuse(name, port, hostPort(name, port)+" is in WSH_DENY_HOSTS")
	}
	if !matchName(p.cfg.Allow, name, port) {
		return netip.Addr{}, "", p.refuse(name, port, hostPort(name, port)+" is not in WSH_ALLOW_HOSTS")
	}
	return netip.Addr{}, name, nil
}

// noneHint is what to set to reach host:port, where wsh can say it
// without looking anything up: for an address, the entry that allows it;
// for a name, the entry that allows it if it leads to a public address.
func noneHint(host string, port uint16) string {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" || a.Unmap().IsLinkLocalUnicast() && a.Unmap().Is6() || a.Unmap().IsUnspecified() {
			return "" // no entry reaches it
		}
		return "; WSH_NETWORK=proxy with WSH_ALLOW_HOSTS=" + hostPort(a.Unmap().String(), port) + " would allow it"
	}
	name, err := hostrule.Normalize(host)
	if err != nil || hostrule.LooksNumeric(name) || name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return ""
	}
	return "; WSH_NETWORK=proxy with WSH_ALLOW_HOSTS=" + hostPort(name, port) + " would allow it, where it leads to a public address"
}

// denied says whether a deny entry names a, or the IPv4 address a 6to4
// or NAT64 address carries.
func (p *Proxy) denied(a netip.Addr, port uint16) bool {
	if matchAddr(p.cfg.Deny, a, port) {
		return true
	}
	v4 := carried(a)
	return v4.IsValid() && matchAddr(p.cfg.Deny, v4, port)
}

// dial connects to host:port as the policy allows: to an address named
// by the allowlist, or to one the allowed name resolves to that is no
// special address (or is one the allowlist names), never to one looked
// up twice.
func (p *Proxy) dial(ctx context.Context, host string, port uint16) (net.Conn, error) {
	addr, name, ref := p.check(host, port)
	if ref != nil {
		return nil, ref
	}
	addrs := []netip.Addr{addr}
	if name != "" {
		lctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
		found, err := p.cfg.Lookup(lctx, name)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cannot resolve %s: %w", name, err)
		}
		addrs = addrs[:0]
		var refused []string
		var specials bool
		for _, a := range found {
			a = a.Unmap()
			switch {
			case matchAddr(p.cfg.Deny, a, port):
				refused = append(refused, a.String()+" (in WSH_DENY_HOSTS)")
			case p.denied(a, port):
				refused = append(refused, a.String()+" (it carries "+carried(a).String()+", in WSH_DENY_HOSTS)")
			case special(a) != "" && !matchAddr(p.cfg.Allow, a, port):
				refused = append(refused, a.String()+" ("+special(a)+")")
				specials = true
			default:
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			why := name + " resolves to " + strings.Join(refused, ", ")
			if specials {
				why += "; such an address is allowed only by an entry of WSH_ALLOW_HOSTS that names it"
			}
			return nil, p.refuse(name, port, why)
		}
	}
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	var err error
	for _, a := range addrs {
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, port).String()); err == nil {
			return c, nil
		}
	}
	return nil, err
}

func matchAddr(rules []hostrule.Rule, a netip.Addr, port uint16) bool {
	for _, r := range rules {
		if r.MatchAddr(a, port) {
			return true
		}
	}
	return false
}

func matchName(rules []hostrule.Rule, name string, port uint16) bool {
	for _, r := range rules {
		if r.MatchName(name, port) {
			return true
		}
	}
	return false
}

// specials are the ranges no allowed name may lead to: the host itself,
// its networks and its cloud's metadata service.
var specials = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a 'this network' address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
}

// special says what kind of address a is, if it is one an allowed name
// must not lead to (a is unmapped).
func special(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address (the cloud's metadata service is one)"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, s := range specials {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	if v4 := carried(a); v4.IsValid() && special(v4) != "" {
		return "an IPv6 address that carries " + special(v4)
	}
	return ""
}

// carried is the IPv4 address that a 6to4 (2002::/16), NAT64
// (64:ff9b::/96), IPv4-translated (SIIT, ::ffff:0:0/96) or Teredo
// (2001::/32, the client's address, inverted) address carries, or the
// zero Addr.
func carried(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return netip.Addr{}
	}
	b := a.As16()
	switch {
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	case nat64.Contains(a) || siit.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case teredo.Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	}
	return netip.Addr{}
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	siit   = netip.MustParsePrefix("::ffff:0:0:0/96")
	teredo = netip.MustParsePrefix("2001::/32")
)

// ServeHTTP serves one request: a CONNECT tunnel or an http:// URL.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		w.Header().Set(Header, "error")
		http.Error(w, "wsh's proxy forwards http:// URLs and tunnels (CONNECT) only; this request is neither", http.StatusBadRequest)
		return
	}
	if _, _, err := splitHostPort(r.URL.Host, 80); err != nil {
		w.Header().Set(Header, "error")
		http.Error(w, "wsh's proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	p.forward.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), upstreamKey{}, &upstreamHolder{})))
}

// forwardError answers a forwarded request that could not be sent.
func (p *Proxy) forwardError(w http.ResponseWriter, r *http.Request, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		w.Header().Set(Header, "blocked; host="+hostPort(ref.host, ref.port))
		http.Error(w, ref.Error(), http.StatusForbidden)
		return
	}
	w.Header().Set(Header, "error")
	http.Error(w, "wsh's proxy: "+err.Error(), http.StatusBadGateway)
}

// connect opens a tunnel to r.Host, or answers why not.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := splitHostPort(r.Host, 0)
	if err != nil {
		w.Header().Set(Header, "error")
		http.Error(w, "wsh's proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	up, err := p.dial(r.Context(), host, port)
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "wsh's proxy: no tunnel over this connection", http.StatusInternalServerError)
		if up != nil {
			up.Close()
		}
		return
	}
	conn, brw, herr := hj.Hijack()
	if herr != nil {
		if up != nil {
			up.Close()
		}
		return
	}
	if err != nil {
		// Written by hand: the reason phrase carries the message, which
		// is all that some clients show of a refused tunnel (Go's shows
		// the phrase, curl the code and, with -v, the line).
		code, phrase, kind := 502, "wsh's proxy: "+err.Error(), "error"
		var ref *refusal
		if errors.As(err, &ref) {
			code, phrase, kind = 403, ref.Error(), "blocked; host="+hostPort(ref.host, ref.port)
		}
		phrase = strings.Map(func(c rune) rune {
			if c < ' ' || c == 0x7f {
				return ' '
			}
			return c
		}, phrase)
		body := phrase + "\n"
		fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\n%s: %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			code, phrase, Header, kind, len(body), body)
		conn.Close()
		return
	}
	if sc, ok := conn.(*servedConn); ok {
		up = sc.attach(up, 0) // ends with the client's connection
	}
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		conn.Close()
		up.Close()
		return
	}
	p.tunnels[up] = struct{}{}
	p.wg.Add(2) // under the lock: Close waits only once closed is set
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	// Each direction, once its source has ended, ends its destination's
	// writing half; from then on the other direction ends once it gets
	// nothing for TunnelLinger.
	var toUp, toClient atomic.Bool // lingering: their reads have an idle bound
	go p.pipe(up, brw.Reader, conn, &toUp, &toClient, done)
	go p.pipe(conn, up, up, &toClient, &toUp, done)
	go func() {
		<-done
		<-done
		conn.Close()
		up.Close()
		p.mu.Lock()
		delete(p.tunnels, up)
		p.mu.Unlock()
	}()
}

// pipe copies src (read from srcConn) to dst. Once lingering is set, each
// read may wait TunnelLinger at most. At src's end it ends dst's writing
// half and sets the other direction (which reads from dst) lingering.
func (p *Proxy) pipe(dst net.Conn, src io.Reader, srcConn net.Conn, lingering, other *atomic.Bool, done chan<- struct{}) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		if lingering.Load() {
			srcConn.SetReadDeadline(time.Now().Add(p.cfg.TunnelLinger))
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
	other.Store(true)
	dst.SetReadDeadline(time.Now().Add(p.cfg.TunnelLinger)) // a read waiting now
	done <- struct{}{}
}

// splitHostPort splits an authority; a missing port is def, or an error
// when def is 0.
func splitHostPort(hp string, def uint16) (string, uint16, error) {
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		if def == 0 || strings.Contains(hp, "]:") {
			return "", 0, fmt.Errorf("%q is not host:port", hp)
		}
		host, ps = strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]"), strconv.Itoa(int(def))
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 || host == "" {
		return "", 0, fmt.Errorf("%q is not host:port", hp)
	}
	return host, uint16(port), nil
}

// hostPort is host:port as an entry of WSH_ALLOW_HOSTS names it.
func hostPort(host string, port uint16) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}
