//go:build linux && cgo

package shell_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"wsh/config"
	"wsh/shell"
)

// TestBlocked: an embedder gives the allowlist in its Config and reads
// back what the proxy refused: each host once, with its count, and said
// once on the Runner's warnings.
func TestBlocked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	// A port nothing listens on, for the refused host.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// Through the proxy, though NO_PROXY names 127.0.0.1 (curl --noproxy '').
	curl := "curl -sS --noproxy '' -w ' %{http_code}\\n' "
	var out, warn lockedBuffer
	r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(strings.NewReader(""), &out, &out), shell.Warnings(&warn),
		shell.WithConfig(config.Config{RequireSandbox: config.FloorFull, Network: config.NetworkProxy, AllowHosts: []string{u.Host}}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	refused := "http://127.0.0.1:" + strconv.Itoa(refusedPort) + "/"
	script := curl + srv.URL + "/; " + curl + refused + "; " + curl + refused
	if err := r.Run(context.Background(), script); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	no := "blocked by wsh: 127.0.0.1:" + strconv.Itoa(refusedPort) + " is not in WSH_ALLOW_HOSTS\n 403\n"
	if got := out.String(); got != "ok 200\n"+no+no {
		t.Errorf("output %q", got)
	}
	b := r.Blocked()
	if len(b) != 1 || b[0].Host != "127.0.0.1" || b[0].Port != uint16(refusedPort) || b[0].Count != 2 || !strings.Contains(b[0].Reason, "not in WSH_ALLOW_HOSTS") {
		t.Errorf("Blocked() = %+v, want the refused host once, counted twice", b)
	}
	if n := strings.Count(warn.String(), "wsh: the proxy refused a command: 127.0.0.1:"); n != 1 {
		t.Errorf("the warnings say the refusal %d times, want once:\n%s", n, warn.String())
	}
}
