package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wsh/internal/hostrule"
)

// upstream is a local HTTP server that says which one it is.
func upstream(t *testing.T, name string) (port uint16) {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	}))
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	p, _ := strconv.Atoi(u.Port())
	return uint16(p)
}

// serve starts a proxy with cfg on a loopback listener.
func serve(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p := New(cfg)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := p.Serve(l); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		p.Close()
		<-served
	})
	return p, l.Addr().String()
}

func rules(t *testing.T, entries ...string) []hostrule.Rule {
	t.Helper()
	r, err := hostrule.ParseAll(entries)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tunnel asks the proxy for a tunnel to target and, when it is opened,
// sends a GET of /path through it. It returns the CONNECT response's
// status line and the body of what came back.
func tunnel(t *testing.T, proxy, target string) (status, body string, hdr http.Header) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	status = resp.Status
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return status, string(b), resp.Header
	}
	fmt.Fprintf(c, "GET /through HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target)
	r2, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET through the tunnel to %s: %v", target, err)
	}
	b, _ := io.ReadAll(r2.Body)
	return status, string(b), resp.Header
}

// forward sends GET of an http:// URL through the proxy.
func forward(t *testing.T, proxy, target string) (*http.Response, string) {
	t.Helper()
	pu, _ := url.Parse("http://" + proxy)
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
	defer cl.CloseIdleConnections()
	resp, err := cl.Get("http://" + target + "/fwd")
	if err != nil {
		t.Fatalf("GET http://%s through the proxy: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func fakeLookup(m map[string][]string, calls *atomic.Int32) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, name string) ([]netip.Addr, error) {
		calls.Add(1)
		var out []netip.Addr
		for _, a := range m[name] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
		}
		return out, nil
	}
}

func TestPolicy(t *testing.T) {
	p1, p2 := upstream(t, "one"), upstream(t, "two")
	var lookups atomic.Int32
	names := map[string][]string{
		"one.test":      {"127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"inside.test":   {"10.1.2.3", "fd00::1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"nat64.test":    {"64:ff9b::a01:203", "2002:a01:203::"},
		"compat.test":   {"::a01:203"},
	}
	var said []string
	var saidMu sync.Mutex
	p, addr := serve(t, Config{
		Allow:  rules(t, fmt.Sprintf("127.0.0.1:%d", p1), "*.test", "one.test", "deny.test"),
		Deny:   rules(t, "deny.test", "10.1.2.3"),
		Lookup: fakeLookup(names, &lookups),
		OnRefusal: func(r Refusal) {
			saidMu.Lock()
			said = append(said, hostPort(r.Host, r.Port))
			saidMu.Unlock()
		},
	})
	one := fmt.Sprintf("127.0.0.1:%d", p1)
	two := fmt.Sprintf("127.0.0.1:%d", p2)

	if st, body, _ := tunnel(t, addr, one); !strings.HasPrefix(st, "200") || body != "one /through" {
		t.Errorf("tunnel to the allowed %s: %q %q, want 200 and one's answer", one, st, body)
	}
	if resp, body := forward(t, addr, one); resp.StatusCode != 200 || body != "one /fwd" {
		t.Errorf("forward to the allowed %s: %d %q", one, resp.StatusCode, body)
	}
	// An address with a trailing dot is the address.
	if st, body, _ := tunnel(t, addr, fmt.Sprintf("127.0.0.1.:%d", p1)); !strings.HasPrefix(st, "200") || body != "one /through" {
		t.Errorf("tunnel to 127.0.0.1.:%d: %q %q", p1, st, body)
	}
	// The name is allowed, and resolves to the loopback address that the
	// allowlist names on that port: allowed.
	if st, body, _ := tunnel(t, addr, fmt.Sprintf("one.test:%d", p1)); !strings.HasPrefix(st, "200") || body != "one /through" {
		t.Errorf("tunnel to one.test:%d: %q %q", p1, st, body)
	}

	refused := []struct {
		target, want string
	}{
		{two, two + " is not in WSH_ALLOW_HOSTS"},
		// Allowed by *.test, but leads to a loopback address the
		// allowlist names on another port only.
		{fmt.Sprintf("one.test:%d", p2), "one.test resolves to 127.0.0.1 (a loopback address)"},
		{"metadata.test:80", "metadata.test resolves to 169.254.169.254 (a link-local address"},
		// One private address denied, the other not named.
		{"inside.test:443", "inside.test resolves to 10.1.2.3 (in WSH_DENY_HOSTS), fd00::1 (a private address); such an address is allowed only by an entry of WSH_ALLOW_HOSTS that names it"},
		{fmt.Sprintf("mapped.test:%d", p2), "mapped.test resolves to 127.0.0.1 (a loopback address)"},
		{"deny.test:443", "deny.test:443 is in WSH_DENY_HOSTS"},
		{"test:443", "test:443 is not in WSH_ALLOW_HOSTS"}, // *.test is its subdomains only
		{"ONE.TEST.:1", "one.test resolves to 127.0.0.1"},
		{fmt.Sprintf("[::ffff:127.0.0.2]:%d", p1), "127.0.0.2:" + strconv.Itoa(int(p1)) + " is not in WSH_ALLOW_HOSTS"},
		{"10.1.2.3:80", "10.1.2.3:80 is in WSH_DENY_HOSTS"},
		// The denied IPv4 address inside NAT64 and 6to4 addresses.
		{"[64:ff9b::a01:203]:80", "[64:ff9b::a01:203]:80 carries 10.1.2.3, which is in WSH_DENY_HOSTS"},
		{"[::ffff:0:a01:203]:80", "[::ffff:0:a01:203]:80 carries 10.1.2.3, which is in WSH_DENY_HOSTS"},
		{"[2001:0:1:2:3:4:f5fe:fdfc]:80", "carries 10.1.2.3, which is in WSH_DENY_HOSTS"}, // Teredo, inverted
		{"nat64.test:80", "nat64.test resolves to 64:ff9b::a01:203 (it carries 10.1.2.3, in WSH_DENY_HOSTS), 2002:a01:203:: (it carries 10.1.2.3, in WSH_DENY_HOSTS)"},
		{"compat.test:80", "compat.test resolves to ::a01:203 (an IPv4-compatible address); such an address"},
		{"numeric.0x7f.1:80", "not in WSH_ALLOW_HOSTS"},
		{"0x7f.1:80", "0x7f.1 is a numeric form of an address, which no entry names"},
	}
	for _, c := range refused {
		start := time.Now()
		st, body, hdr := tunnel(t, addr, c.target)
		if !strings.HasPrefix(st, "403 blocked by wsh: ") || !strings.Contains(st, c.want) {
			t.Errorf("CONNECT %s: status %q, want 403 and %q", c.target, st, c.want)
		}
		if !strings.HasPrefix(body, "blocked by wsh: ") || !strings.Contains(body, c.want) {
			t.Errorf("CONNECT %s: body %q, want %q", c.target, body, c.want)
		}
		if h := hdr.Get(Header); !strings.HasPrefix(h, "blocked; host=") {
			t.Errorf("CONNECT %s: %s: %q", c.target, Header, h)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("CONNECT %s: refused after %v", c.target, d)
		}
	}
	resp, body := forward(t, addr, two)
	if resp.StatusCode != 403 || !strings.Contains(body, two+" is not in WSH_ALLOW_HOSTS") || !strings.HasPrefix(resp.Header.Get(Header), "blocked") {
		t.Errorf("forward to %s: %d %q %v, want a 403 that says why", two, resp.StatusCode, body, resp.Header)
	}
	// Twice refused, recorded once with its count, said once.
	tunnel(t, addr, two)
	var got []string
	for _, r := range p.Refused() {
		got = append(got, fmt.Sprintf("%s=%d", hostPort(r.Host, r.Port), r.Count))
	}
	wantRec := fmt.Sprintf("%s=3", two)
	if len(got) == 0 || got[0] != wantRec {
		t.Errorf("Refused: %v, want %s first", got, wantRec)
	}
	saidMu.Lock()
	if len(said) != len(got) {
		t.Errorf("OnRefusal said %v, Refused has %v: want each host once", said, got)
	}
	saidMu.Unlock()
}

// With WSH_NETWORK=none the proxy refuses everything and looks nothing up.
func TestNone(t *testing.T) {
	p1 := upstream(t, "one")
	var lookups atomic.Int32
	_, addr := serve(t, Config{None: true, Allow: rules(t, "127.0.0.1"), Lookup: fakeLookup(nil, &lookups)})
	for _, target := range []string{fmt.Sprintf("127.0.0.1:%d", p1), "registry.npmjs.org:443"} {
		st, body, _ := tunnel(t, addr, target)
		if !strings.HasPrefix(st, "403") || !strings.Contains(body, "WSH_NETWORK=none") {
			t.Errorf("CONNECT %s with none: %q %q", target, st, body)
		}
	}
	// The hint names an entry only where one would help.
	for target, hint := range map[string]string{
		"registry.npmjs.org:443": "; WSH_NETWORK=proxy with WSH_ALLOW_HOSTS=registry.npmjs.org:443 would allow it, where it leads to a public address",
		"10.0.0.1:80":            "; WSH_NETWORK=proxy with WSH_ALLOW_HOSTS=10.0.0.1:80 would allow it",
		"localhost:80":           "",
		"[fe80::1]:80":           "",
		"0x7f.1:80":              "",
	} {
		_, body, _ := tunnel(t, addr, target)
		if want := "blocked by wsh: commands have no network (WSH_NETWORK=none)" + hint + "\n"; body != want {
			t.Errorf("CONNECT %s with none: %q, want %q", target, body, want)
		}
	}
	if n := lookups.Load(); n != 0 {
		t.Errorf("%d lookups with none", n)
	}
}

// A direct request (not a proxy's) and a malformed tunnel are answered,
// not dropped.
func TestNotAProxyRequest(t *testing.T) {
	_, addr := serve(t, Config{})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "http:// URLs and tunnels") {
		t.Errorf("a direct request: %d %q", resp.StatusCode, b)
	}
	if st, _, _ := tunnel(t, addr, "no-port.test"); !strings.HasPrefix(st, "400") {
		t.Errorf("CONNECT without a port: %q", st)
	}
}

func TestSpecial(t *testing.T) {
	for a, want := range map[string]bool{
		"127.0.0.1": true, "10.0.0.1": true, "172.16.5.4": true, "192.168.1.1": true, "169.254.169.254": true,
		"100.100.100.200": true, "0.0.0.0": true, "0.1.2.3": true, "224.0.0.1": true, "255.255.255.255": true,
		"::1": true, "::": true, "fd00:ec2::254": true, "fe80::1": true, "2002:a00:1::": true, "64:ff9b::a9fe:a9fe": true,
		"203.0.113.80": false, "8.8.8.8": false, "2606:4700::1111": false, "2002:808:808::": false,
	} {
		if got := special(netip.MustParseAddr(a).Unmap()) != ""; got != want {
			t.Errorf("special(%s) = %v, want %v", a, got, want)
		}
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestLoad: 200 concurrent tunnels and forwards through one proxy to a
// local server all get their answer, and once the proxy is closed no
// descriptor or goroutine of it is left.
func TestLoad(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	fds, gs := openFDs(t), runtime.NumGoroutine()

	p := New(Config{Allow: rules(t, u.Host)})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { p.Serve(l); close(served) }()
	const n = 200
	var wg sync.WaitGroup
	var ok atomic.Int32
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			c, err := net.DialTimeout("tcp", l.Addr().String(), 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(c)
			if i%2 == 0 {
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host, u.Host)
				resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
				if err != nil || resp.StatusCode != 200 {
					errs <- fmt.Errorf("CONNECT: %v %v", resp, err)
					return
				}
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", u.Host)
			} else {
				fmt.Fprintf(c, "GET %s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", srv.URL, u.Host)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			if string(b) != "ok" {
				errs <- fmt.Errorf("answer %q", b)
				return
			}
			ok.Add(1)
		}(i)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ok.Load() != n {
		t.Fatalf("%d of %d requests answered", ok.Load(), n)
	}
	// The clients are gone; tunnels end on their EOF. Close ends what is left.
	p.Close()
	<-served
	srv.CloseClientConnections()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (openFDs(t) > fds || runtime.NumGoroutine() > gs) {
		// io.Copy between two TCP connections splices through pipes
		// that Go keeps in a pool until a collection frees them.
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if f, g := openFDs(t), runtime.NumGoroutine(); f > fds || g > gs {
		buf := make([]byte, 1<<16)
		t.Errorf("after Close: %d descriptors (%d before), %d goroutines (%d before)\n%s", f, fds, g, gs, buf[:runtime.Stack(buf, true)])
	}
}

// A tunnel open when the proxy closes is ended, not left.
func TestCloseEndsTunnels(t *testing.T) {
	up := acceptEach(t, func(c net.Conn) { io.Copy(io.Discard, c) }) // never answers, never closes
	p := New(Config{Allow: rules(t, up)})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go p.Serve(l)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", up)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits on an open tunnel")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the client's end after Close: %v, want EOF", err)
	}
}

// acceptEach is a server on loopback that runs handle on a goroutine of
// its own for each connection, until the test ends. It returns its
// address.
func acceptEach(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return l.Addr().String()
}

// neverCloses is a server that accepts, answers the first bytes of an
// upgrade with 101 if asked, and never closes a connection. It returns
// its address and a channel that gets each connection's end.
func neverCloses(t *testing.T, upgrade bool) (string, <-chan error) {
	t.Helper()
	ended := make(chan error, 16)
	return acceptEach(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		if upgrade {
			if _, err := http.ReadRequest(br); err != nil {
				ended <- err
				return
			}
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		}
		_, err := io.Copy(io.Discard, br) // until the proxy closes it
		ended <- err
		c.Close()
	}), ended
}

// A listener Serve was given, once closed (the jail has ended), takes its
// connections with it: a tunnel to a server that never closes, and an
// upgraded connection, are ended, and Serve returns.
func TestServeEndsItsConnections(t *testing.T) {
	tun, tunEnded := neverCloses(t, false)
	upg, upgEnded := neverCloses(t, true)
	p := New(Config{Allow: rules(t, tun, upg)})
	defer p.Close()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan struct{})
	go func() { p.Serve(l); close(served) }()

	c1, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	fmt.Fprintf(c1, "CONNECT %s HTTP/1.1\r\n\r\n", tun)
	if resp, err := http.ReadResponse(bufio.NewReader(c1), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c2, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n", upg, upg)
	br2 := bufio.NewReader(c2)
	if resp, err := http.ReadResponse(br2, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("the upgrade: %v %v", resp, err)
	}
	l.Close()
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve goes on after its listener was closed")
	}
	for name, c := range map[string]io.Reader{"the tunnel": c1, "the upgraded connection": br2} {
		c1.SetReadDeadline(time.Now().Add(5 * time.Second))
		c2.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%s, its listener closed: the client's read gives %v, want EOF", name, err)
		}
	}
	for name, ch := range map[string]<-chan error{"the tunnel's": tunEnded, "the upgrade's": upgEnded} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Errorf("%s server still holds its connection", name)
		}
	}
}

// A tunnel whose client has gone (a command that exited, in a session
// that goes on) is ended within TunnelLinger, though the server neither
// sends nor closes: nothing of it is left in the proxy.
func TestTunnelLingersNotForEver(t *testing.T) {
	// A server that reads to EOF and then holds the connection, open.
	var held []net.Conn
	var heldMu sync.Mutex
	t.Cleanup(func() {
		heldMu.Lock()
		for _, c := range held {
			c.Close()
		}
		heldMu.Unlock()
	})
	tun := acceptEach(t, func(c net.Conn) {
		heldMu.Lock()
		held = append(held, c)
		heldMu.Unlock()
		io.Copy(io.Discard, c)
	})
	p, addr := serve(t, Config{Allow: rules(t, tun), TunnelLinger: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", tun)
	if resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c.Close()
	left := func() (int, int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.tunnels), len(p.conns)
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if tn, cn := left(); tn == 0 && cn == 0 {
			return
		}
	}
	tn, cn := left()
	t.Errorf("5 s after its client went: %d tunnels and %d connections left in the proxy", tn, cn)
}

// Past MaxConns at once, a connection gets a 503 at once; one freed makes
// room again.
func TestMaxConns(t *testing.T) {
	_, addr := serve(t, Config{MaxConns: 3})
	var held []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	answer := func() string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err.Error()
		}
		return resp.Status
	}
	// The three are accepted (the server reads their requests), so the
	// fourth is past the limit.
	time.Sleep(100 * time.Millisecond)
	if got := answer(); !strings.HasPrefix(got, "503 wsh's proxy: more than 3 connections at once") {
		t.Errorf("a fourth connection: %q, want a 503", got)
	}
	held[0].Close()
	ok := false
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !ok; time.Sleep(20 * time.Millisecond) {
		ok = strings.HasPrefix(answer(), "400")
	}
	if !ok {
		t.Error("with one connection closed, a new one is still refused")
	}
}

// notReading is a server that accepts and never reads: what it is sent
// fills the connection. ended gets each connection's end, as the server
// finds it once told to look (look is closed).
func notReading(t *testing.T) (addr string, look chan struct{}, ended chan error) {
	t.Helper()
	look, ended = make(chan struct{}), make(chan error, 16)
	return acceptEach(t, func(c net.Conn) {
		defer c.Close()
		<-look
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c) // nil: EOF, the proxy closed it
		ended <- err
	}), look, ended
}

// A peer that stops reading holds nothing for ever: a tunnel and a
// forwarded upload to a server that never reads end once a write has
// stalled for WriteStall, though the client has gone; and Close ends a
// forwarded request's upstream connection too.
func TestWriteStall(t *testing.T) {
	up, look, ended := notReading(t)
	p, addr := serve(t, Config{Allow: rules(t, up), WriteStall: 300 * time.Millisecond, TunnelLinger: time.Hour})
	fill := func(c net.Conn) {
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 1<<16)
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}
	c1, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c1, "CONNECT %s HTTP/1.1\r\n\r\n", up)
	if resp, err := http.ReadResponse(bufio.NewReader(c1), &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c2, "POST http://%s/ HTTP/1.1\r\nHost: %s\r\nContent-Length: 100000000\r\n\r\n", up, up)
	fill(c1)
	fill(c2)
	c1.Close()
	c2.Close()
	left := func() (int, int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.tunnels), len(p.conns)
	}
	ok := false
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && !ok; time.Sleep(20 * time.Millisecond) {
		tn, cn := left()
		ok = tn == 0 && cn == 0
	}
	if !ok {
		tn, cn := left()
		t.Errorf("5 s after their clients went: %d tunnels and %d connections left in the proxy", tn, cn)
	}
	close(look)
	for i := 0; i < 2; i++ {
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("a connection of the server that never reads: %v, want it closed by the proxy", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the server's connections were not closed")
		}
	}
}

// A slow write that goes on is not cut by the stall bound: each write
// that makes some progress gets another WriteStall; one that makes none
// closes the connection.
func TestWriteStallSparesTheSlow(t *testing.T) {
	a, b := net.Pipe() // synchronous: a write waits for its reader
	defer b.Close()
	stalled := make(chan struct{})
	sc := &stallConn{Conn: a, stall: 100 * time.Millisecond, onStall: func() { close(stalled) }}
	go func() {
		buf := make([]byte, 1)
		for i := 0; i < 10; i++ {
			time.Sleep(60 * time.Millisecond) // a byte at a time, slower than nothing but within the bound
			if _, err := b.Read(buf); err != nil {
				return
			}
		}
	}()
	if n, err := sc.Write(make([]byte, 10)); n != 10 || err != nil {
		t.Fatalf("a slow write that goes on: %d bytes, %v; want all of it", n, err)
	}
	select {
	case <-stalled:
		t.Fatal("a slow write that goes on was taken for a stall")
	default:
	}
	// Nobody reads now: the next write stalls, and the connection ends.
	if _, err := sc.Write([]byte("x")); err == nil {
		t.Fatal("a write nobody reads returned no error")
	}
	select {
	case <-stalled:
	case <-time.After(time.Second):
		t.Fatal("a stalled write did not close the connection")
	}
}

// A client that half-closes and then reads a long download gets all of
// it: the linger bounds a silence, not the rest of the tunnel.
func TestTunnelLingerIsAnIdleBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(io.Discard, c) // the request, to the client's half-close
		for i := 0; i < 15; i++ {
			time.Sleep(100 * time.Millisecond)
			c.Write(make([]byte, 1024))
		}
	}()
	_, addr := serve(t, Config{Allow: rules(t, l.Addr().String()), TunnelLinger: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", l.Addr())
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(c, "request")
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _ := io.Copy(io.Discard, br)
	if n != 15*1024 {
		t.Errorf("after a half-close, the download gave %d bytes of %d", n, 15*1024)
	}
}

// A forwarded request whose client has gone ends, though the client left
// pipelined bytes behind (which hide its end from the server) and the
// upstream went silent after its headers; and a dial in flight when the
// client goes ends with it.
func TestForwardedEndsWithTheClient(t *testing.T) {
	up := acceptEach(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nx") // then silence
		time.Sleep(time.Minute)
	})
	var dialing atomic.Int32
	lookup := func(ctx context.Context, name string) ([]netip.Addr, error) {
		dialing.Add(1)
		defer dialing.Add(-1)
		<-ctx.Done() // a lookup that never answers
		return nil, ctx.Err()
	}
	p, addr := serve(t, Config{Allow: rules(t, up, "slow.test"), Lookup: lookup, ForwardIdle: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n%s", up, up, strings.Repeat("x", 16<<10))
	time.Sleep(200 * time.Millisecond)
	c.Close()
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET http://slow.test/ HTTP/1.1\r\nHost: slow.test\r\n\r\n")
		defer c.Close()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Errorf("5 s on: %s", what)
	}
	conns := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.conns)
	}
	waitFor("20 lookups in flight", func() bool { return dialing.Load() == 20 })
	// The first, whose upstream went silent, has ended: only the slow
	// ones are left.
	waitFor("the forwarded request of a client that has gone is still served", func() bool { return conns() == 20 })
	// The slow ones' clients go: their lookups end with them.
	p.closeConns(nil)
	waitFor("the lookups of clients that have gone still run", func() bool { return dialing.Load() == 0 })
	waitFor("connections are left", func() bool { return conns() == 0 })
}

// One client connection that sends request after request keeps no
// record of the upstream connections that have ended.
func TestAttachedDoesNotGrow(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	p, addr := serve(t, Config{Allow: rules(t, u.Host)})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for i := 0; i < 50; i++ {
		fmt.Fprintf(c, "GET %s/ HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, u.Host)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	time.Sleep(100 * time.Millisecond)
	p.mu.Lock()
	var n int
	for sc := range p.conns {
		sc.mu.Lock()
		n += len(sc.attached)
		sc.mu.Unlock()
	}
	p.mu.Unlock()
	if n > 1 {
		t.Errorf("after 50 requests on one connection, %d upstream connections are still attached to it", n)
	}
}

// A forwarded request's idle bound is a silence of both directions: a
// slow upload whose server answers at its end is not cut, nor is an
// upgraded connection that is idle, nor a lookup bounded by anything but
// DialTimeout.
func TestForwardIdleSparesTheLive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "test" {
			c, brw, _ := w.(http.Hijacker).Hijack()
			defer c.Close()
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
			line, _ := brw.ReadString('\n') // after the client's silence
			io.WriteString(c, "echo "+line)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %d", len(b))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	_, addr := serve(t, Config{Allow: rules(t, u.Host, "never.test"), ForwardIdle: 300 * time.Millisecond, DialTimeout: 300 * time.Millisecond,
		Lookup: func(ctx context.Context, _ string) ([]netip.Addr, error) { <-ctx.Done(); return nil, ctx.Err() }})

	// The upload: a byte every 120 ms, 12 bytes, some 1.4 s.
	pr, pw := io.Pipe()
	go func() {
		for i := 0; i < 12; i++ {
			time.Sleep(120 * time.Millisecond)
			pw.Write([]byte("x"))
		}
		pw.Close()
	}()
	pu, _ := url.Parse("http://" + addr)
	cl := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
	defer cl.CloseIdleConnections()
	resp, err := cl.Post(srv.URL+"/up", "text/plain", pr)
	if err != nil {
		t.Fatalf("the slow upload: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "got 12" {
		t.Errorf("the slow upload: %d %q, want it whole", resp.StatusCode, b)
	}

	// The upgraded connection, idle for 1 s.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s/ws HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n", srv.URL, u.Host)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 101 {
		t.Fatalf("the upgrade: %v %v", resp, err)
	}
	time.Sleep(time.Second)
	io.WriteString(c, "ping\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := br.ReadString('\n'); line != "echo ping\n" {
		t.Errorf("the upgraded connection after 1 s idle: %q %v, want the echo", line, err)
	}

	// A lookup that never answers ends after DialTimeout.
	start := time.Now()
	if st, _, _ := tunnel(t, addr, "never.test:443"); !strings.HasPrefix(st, "502") || time.Since(start) > 3*time.Second {
		t.Errorf("a lookup that never answers: %q after %v, want a 502 within DialTimeout", st, time.Since(start))
	}
}
