//go:build linux && cgo

package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"wsh/internal/hostrule"
	"wsh/internal/netproxy"
)

// BenchmarkProxy is the latency wsh's proxy adds to one request to a
// local server, each on a connection of its own (as a command's first
// request is): a GET forwarded by the proxy, and a GET through a CONNECT
// tunnel, each paired with the same GET made directly.
func BenchmarkProxy(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	allow, err := hostrule.ParseAll([]string{u.Host})
	if err != nil {
		b.Fatal(err)
	}
	p := netproxy.New(netproxy.Config{Allow: allow})
	defer p.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(l)
	proxy := l.Addr().String()

	// get sends one GET on a new connection to addr (the server, or the
	// proxy with an absolute URL), after a CONNECT when tunnel is set.
	get := func(addr string, absolute, tunnel bool) func() error {
		return func() error {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return err
			}
			defer c.Close()
			br := bufio.NewReader(c)
			if tunnel {
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host, u.Host)
				resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
				if err != nil || resp.StatusCode != 200 {
					return fmt.Errorf("CONNECT: %v %v", resp, err)
				}
			}
			target := "/"
			if absolute {
				target = srv.URL + "/"
			}
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, u.Host)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			if string(body) != "ok" {
				return fmt.Errorf("answer %q", body)
			}
			return nil
		}
	}
	direct := get(u.Host, false, false)
	b.Run("pair=proxy-forward-vs-direct", func(b *testing.B) {
		pairLoop(b, get(proxy, true, false), direct, wallTime, "ns/op")
	})
	b.Run("pair=proxy-tunnel-vs-direct", func(b *testing.B) {
		pairLoop(b, get(proxy, false, true), direct, wallTime, "ns/op")
	})
}
