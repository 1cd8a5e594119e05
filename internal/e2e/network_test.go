//go:build linux && cgo

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The network: with WSH_NETWORK=proxy a jail reaches what WSH_ALLOW_HOSTS
// names through wsh's proxy, and nothing else; with none (the default)
// every request through the proxy is refused at once, so that tools stop
// at once and say why. The servers are on the host's loopback: only wsh's
// proxy, in wsh's process, can reach them from a jail.

// hostServer is an HTTP server on the host's loopback that counts what
// reached it.
type hostServer struct {
	port int
	hits atomic.Int32
}

func newHostServer(t *testing.T, name string) *hostServer {
	t.Helper()
	s := &hostServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		fmt.Fprintf(w, "%s %s", name, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	s.port, _ = strconv.Atoi(u.Port())
	return s
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("this test needs %s: %v", name, err)
	}
}

// hostAddress is an IPv4 address of this machine that is not loopback.
func hostAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatal("no address of this machine but loopback")
	return ""
}

// line returns the value of the line "key value..." of out.
func line(out, key string) string {
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, " "); ok && k == key {
			return v
		}
	}
	return "(no line " + key + ")"
}

// wantLines checks the lines "key value" of out.
func wantLines(t *testing.T, out string, want []struct{ key, want string }) {
	t.Helper()
	for _, c := range want {
		if got := line(out, c.key); got != c.want {
			t.Errorf("%s: %q, want %q", c.key, got, c.want)
		}
	}
}

// proxyCurls reaches the host's loopback server P1 through the proxy,
// forwarded and tunnelled, asks for P2, and tries P1 past the proxy.
const proxyCurls = `
echo forward $(curl -sS --noproxy '' -w ' %{http_code}' http://127.0.0.1:P1/f)
echo tunnel $(curl -sS --noproxy '' -p -w ' %{http_code}' http://127.0.0.1:P1/t)
echo refused $(curl -sS --noproxy '' -w ' %{http_code}' http://127.0.0.1:P2/r)
curl -sS --noproxy '*' http://127.0.0.1:P1/b 2>/dev/null; echo bypass $?
`

// checkHits checks what reached the servers since h1 and h2: the
// forwarded and the tunnelled request, and nothing of the other.
func checkHits(t *testing.T, one, two *hostServer, h1, h2 int32) {
	t.Helper()
	if n := one.hits.Load() - h1; n != 2 {
		t.Errorf("the allowed server got %d requests, want the forwarded one and the tunnelled one", n)
	}
	if n := two.hits.Load() - h2; n != 0 {
		t.Errorf("the server of no entry got %d requests", n)
	}
}

// connectPy connects to argv[1]:argv[2] once and prints "connected" or the
// errno's name.
const connectPy = `python3 -c '
import socket, sys, errno
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close(); print("connected")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' `

// TestProxyAllowlist: what WSH_ALLOW_HOSTS names is reached through the
// proxy, by a forwarded request and through a tunnel; anything else is a
// 403 at once that says why, and never reaches the host's server; nothing
// bypasses the proxy; an allowed name that leads to a loopback address
// the list does not name is refused.
func TestProxyAllowlist(t *testing.T) {
	needTool(t, "curl")
	one, two := newHostServer(t, "one"), newHostServer(t, "two")
	hostIP := hostAddress(t)
	p1, p2 := strconv.Itoa(one.port), strconv.Itoa(two.port)
	script := strings.NewReplacer("P1", p1, "P2", p2, "HOSTIP", hostIP).Replace(`s=$(date +%s%N)` + proxyCurls + `
curl -sS --noproxy '' -D - -o /dev/null http://127.0.0.1:P2/r | tr -d '\r' | sed -n 's/^X-Wsh-Proxy: /header /p'
curl -sS --noproxy '' -p http://127.0.0.1:P2/t 2>/dev/null; echo tunnel-refused $?
e=$(date +%s%N)
echo ms $(( (e - s) / 1000000 ))
echo raw-loopback $(` + connectPy + `127.0.0.1 P1)
echo raw-host $(` + connectPy + `HOSTIP P1)
echo by-name $(curl -sS --noproxy '' -w ' %{http_code}' http://localhost:P2/n)
echo links $(ls /sys/class/net)
`)
	for _, mode := range jailModes {
		for _, u := range users {
			t.Run(mode+"/"+u.name, func(t *testing.T) {
				h := userHome(t, u)
				h1, h2 := one.hits.Load(), two.hits.Load()
				env := h.env(append([]string{"WSH_JAIL=" + mode, "WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS=127.0.0.1:" + p1 + ",localhost:" + p2}, jailEnv...)...)
				r := runWsh(t, u, h.proj, env, script)
				if r.status != 0 {
					t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				blocked := "blocked by wsh: 127.0.0.1:" + p2 + " is not in WSH_ALLOW_HOSTS"
				wantLines(t, r.stdout, []struct{ key, want string }{
					{"forward", "one /f 200"},
					{"tunnel", "one /t 200"},
					{"header", "blocked; host=127.0.0.1:" + p2},
					{"refused", blocked + " 403"},
					{"tunnel-refused", "56"}, // curl: the CONNECT failed
					{"bypass", "7"},          // curl: could not connect
					{"raw-loopback", "ECONNREFUSED"},
					{"raw-host", "ENETUNREACH"},
					{"by-name", "blocked by wsh: localhost resolves to 127.0.0.1 (a loopback address); such an address is allowed only by an entry of WSH_ALLOW_HOSTS that names it 403"},
					{"links", "lo"},
				})
				if ms, err := strconv.Atoi(line(r.stdout, "ms")); err != nil || ms > 2000 {
					t.Errorf("the requests, four of them refused, took %q ms, want them at once (under 2 s)", line(r.stdout, "ms"))
				}
				checkHits(t, one, two, h1, h2)
				said := "wsh: the proxy refused a command: " + strings.TrimPrefix(blocked, "blocked by wsh: ")
				if n := strings.Count(r.stderr, said); n != 1 {
					t.Errorf("stderr says %q %d times, want once:\n%s", said, n, r.stderr)
				}
			})
		}
	}
}

// goProxyHost is the host of the first proxy of `go env GOPROXY`, and
// that value, which the jail is given as it is.
func goProxyHost(t *testing.T) (host, goproxy string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	goproxy = strings.TrimSpace(string(out))
	first, _, _ := strings.Cut(goproxy, ",")
	first, _, _ = strings.Cut(first, "|")
	u, err := url.Parse(first)
	if err != nil || u.Host == "" {
		t.Fatalf("GOPROXY=%q: its first entry is no URL of a proxy", goproxy)
	}
	return u.Host, goproxy
}

// TestProxyGoModDownload: a real download through the proxy, which
// allows exactly the module proxy's host (read from go env at run time);
// with an empty allowlist the same command fails at once and says why.
func TestProxyGoModDownload(t *testing.T) {
	host, goproxy := goProxyHost(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			for _, allow := range []string{host, ""} {
				cache := filepath.Join(h.proj, "modcache-"+strconv.Itoa(len(allow)))
				mkdirOwned(t, u, cache)
				t.Cleanup(func() { os.RemoveAll(cache) })
				env := h.env(append([]string{"WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS=" + allow, "GOPROXY=" + goproxy,
					"GOSUMDB=off", "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GOMODCACHE=" + cache}, jailEnv...)...)
				start := time.Now()
				r := runWsh(t, u, h.proj, env, "go mod download -json rsc.io/quote@v1.5.2")
				took := time.Since(start)
				zip := filepath.Join(cache, "cache/download/rsc.io/quote/@v/v1.5.2.zip")
				_, zerr := os.Stat(zip)
				if allow != "" {
					if r.status != 0 || !strings.Contains(r.stdout, `"Version": "v1.5.2"`) || zerr != nil {
						t.Errorf("allowing %s: status %d, the module's zip: %v\nstdout:\n%s\nstderr:\n%s", host, r.status, zerr, r.stdout, r.stderr)
					}
					continue
				}
				if r.status == 0 || zerr == nil || took > 5*time.Second {
					t.Errorf("allowing nothing: status %d after %v (want a failure within 5 s), the zip: %v", r.status, took, zerr)
				}
				if !strings.Contains(r.stdout+r.stderr, "is not in WSH_ALLOW_HOSTS") {
					t.Errorf("allowing nothing: nothing names WSH_ALLOW_HOSTS\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestNetworkNoneFailsAtOnce: with WSH_NETWORK=none a lookup, a connect
// and the package managers fail at once, the package managers saying
// that commands have no network, instead of retrying for a minute (npm
// took 71 s before wsh pointed it at a proxy that refuses).
func TestNetworkNoneFailsAtOnce(t *testing.T) {
	needTool(t, "curl")
	needTool(t, "npm")
	_, goproxy := goProxyHost(t)
	// wsh's own line, said once for each host refused, whatever the
	// tool prints; and what the tool prints of the proxy's answer.
	said := "wsh: the proxy refused a command: commands have no network (WSH_NETWORK=none)"
	cases := []struct {
		name, script string
		bound        time.Duration
		proxied      bool           // the tool goes through the proxy
		says         *regexp.Regexp // in what the tool prints, or nil
	}{
		{"getent", "getent hosts example.com", 2 * time.Second, false, nil},
		{"curl", "curl -sS https://example.com/", 2 * time.Second, true, regexp.MustCompile(`CONNECT tunnel failed, response 403`)},
		{"python", `python3 -c 'import socket; socket.create_connection(("example.com", 443), timeout=30)'`, 2 * time.Second, false, nil},
		{"npm", "echo {} > package.json && npm install --no-audit --no-fund left-pad", 10 * time.Second, true,
			regexp.MustCompile(`403 blocked by wsh: commands have no network \(WSH_NETWORK=none\)`)},
		{"pip", "python3 -m pip download --no-deps -d pipdl six", 10 * time.Second, true, nil},
		{"go", "GOPROXY=" + goproxy + " GOFLAGS=-modcacherw GOMODCACHE=$PWD/modcache GOTOOLCHAIN=local go mod download rsc.io/quote@v1.5.2", 10 * time.Second, true,
			regexp.MustCompile(`blocked by wsh: commands have no network`)},
	}
	for _, u := range users {
		h := userHome(t, u)
		for _, c := range cases {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				dir := filepath.Join(h.proj, "none-"+c.name)
				mkdirOwned(t, u, dir)
				t.Cleanup(func() { os.RemoveAll(dir) })
				start := time.Now()
				r := runWsh(t, u, dir, h.env(append([]string{"WSH_NETWORK=none"}, jailEnv...)...), c.script)
				took := time.Since(start)
				t.Logf("%s failed after %v", c.name, took.Round(time.Millisecond))
				if r.status == 0 || took > c.bound {
					t.Errorf("status %d after %v, want a failure within %v\nstdout:\n%s\nstderr:\n%s", r.status, took, c.bound, r.stdout, r.stderr)
				}
				if c.says != nil && !c.says.MatchString(r.stdout+r.stderr) {
					t.Errorf("the output does not say %q\nstdout:\n%s\nstderr:\n%s", c.says, r.stdout, r.stderr)
				}
				if n := strings.Count(r.stderr, said); c.proxied && n != 1 {
					t.Errorf("wsh says %q %d times, want once\nstderr:\n%s", said, n, r.stderr)
				}
			})
		}
	}
}

// socketsPy tries, on the landlock rung, every way out but the proxy,
// and prints one line for each.
const socketsPy = `python3 -c '
import socket, errno, os, sys
def name(e): return errno.errorcode.get(e.errno, e.errno)
for label, fam, typ, proto in [("udp", socket.AF_INET, socket.SOCK_DGRAM, 0), ("udp6", socket.AF_INET6, socket.SOCK_DGRAM, 0),
        ("mptcp", socket.AF_INET, socket.SOCK_STREAM, 262), ("sctp", socket.AF_INET, socket.SOCK_STREAM, 132),
        ("raw", socket.AF_INET, socket.SOCK_RAW, 1), ("packet", socket.AF_PACKET, socket.SOCK_RAW, 0)]:
    try: socket.socket(fam, typ, proto).close(); print(label, "ok")
    except OSError as e: print(label, name(e))
proxy = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
s = socket.socket()
try: s.bind(("127.0.0.1", 0)); print("bind ok")
except OSError as e: print("bind", name(e))
s = socket.socket()
try: s.listen(); print("listen ok", s.getsockname())
except OSError as e: print("listen", name(e))
s = socket.socket()
try: s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", int(sys.argv[1]))); print("fastopen ok")
except OSError as e: print("fastopen", name(e))
for label, addr in [("connect-proxy", ("127.0.0.1", proxy)), ("connect-server", ("127.0.0.1", int(sys.argv[1]))), ("connect-host", (sys.argv[2], int(sys.argv[1])))]:
    s = socket.socket()
    try: s.connect(addr); print(label, "ok")
    except OSError as e: print(label, name(e))
' `

// TestLadderProxy: on the landlock rung (no network namespace), with
// WSH_NETWORK=proxy, commands reach the allowed host through the proxy on
// the host's loopback, and by no other way: TCP to any other port is
// refused by Landlock, every other socket by the filter, and the warning
// says what is left (the proxy's port on any address).
func TestLadderProxy(t *testing.T) {
	needTool(t, "curl")
	one, two := newHostServer(t, "one"), newHostServer(t, "two")
	hostIP := hostAddress(t)
	p1, p2 := strconv.Itoa(one.port), strconv.Itoa(two.port)
	script := strings.NewReplacer("P1", p1, "P2", p2, "HOSTIP", hostIP).Replace(proxyCurls + socketsPy + "P2 HOSTIP\n")
	for _, u := range users {
		for _, mode := range []string{"1", "7"} {
			t.Run(u.name+"/mode"+mode, func(t *testing.T) {
				h1, h2 := one.hits.Load(), two.hits.Load()
				env := []string{"WSH_REQUIRE_SANDBOX=landlock", "WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS=127.0.0.1:" + p1}
				r := runHostile(t, u, workDir(t, u), env, mode, script)
				if r.status != 0 {
					t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				wantLines(t, r.stdout, []struct{ key, want string }{
					{"forward", "one /f 200"},
					{"tunnel", "one /t 200"},
					{"refused", "blocked by wsh: 127.0.0.1:" + p2 + " is not in WSH_ALLOW_HOSTS 403"},
					{"bypass", "7"},
					{"udp", "EACCES"}, {"udp6", "EACCES"}, {"mptcp", "EACCES"}, {"sctp", "EACCES"}, {"raw", "EACCES"}, {"packet", "EACCES"},
					{"bind", "EACCES"},
					{"listen", "EACCES"}, // unbound: the kernel would bind it itself, past Landlock
					{"fastopen", "EACCES"},
					{"connect-proxy", "ok"},
					{"connect-server", "EACCES"},
					{"connect-host", "EACCES"},
				})
				checkHits(t, one, two, h1, h2)
				if !regexp.MustCompile(`commands run on the landlock rung.*with WSH_NETWORK=proxy, commands reach the proxy on the host's loopback \(127\.0\.0\.1:\d+\).*port \d+ on any other address is in reach too`).MatchString(r.stderr) {
					t.Errorf("the warning does not say what of the proxy holds on the landlock rung:\n%s", r.stderr)
				}
			})
		}
	}
}

// TestProxyConnectionFlood: a command that opens connection after
// connection to the proxy gets a 503 past the proxy's bound, and nothing
// else of wsh suffers: the next command reaches the allowed host, and wsh
// says nothing but that (with no bound, the same flood used up wsh's
// descriptors, and the home and the session failed with EMFILE).
func TestProxyConnectionFlood(t *testing.T) {
	needTool(t, "curl")
	one := newHostServer(t, "one")
	p1 := strconv.Itoa(one.port)
	flood := `python3 -c '
import socket, resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
held, refused = [], 0
for i in range(1500):
    s = socket.create_connection(("127.0.0.1", 900), timeout=5)
    held.append(s)
for s in held:
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
for s in held:
    s.settimeout(5)
    try:
        if s.recv(64).startswith(b"HTTP/1.1 503"): refused += 1
    except OSError: pass
print("refused", refused)
'
echo after $(curl -sS --noproxy '' -w ' %{http_code}' http://127.0.0.1:P1/a)
`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			h := userHome(t, u)
			env := h.env(append([]string{"WSH_NETWORK=proxy", "WSH_ALLOW_HOSTS=127.0.0.1:" + p1}, jailEnv...)...)
			r := runWsh(t, u, h.proj, env, strings.ReplaceAll(flood, "P1", p1))
			if r.status != 0 {
				t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			if n, err := strconv.Atoi(line(r.stdout, "refused")); err != nil || n < 1500-512 {
				t.Errorf("of 1500 connections at once, %q got a 503, want all past the bound (512)", line(r.stdout, "refused"))
			}
			if got := line(r.stdout, "after"); got != "one /a 200" {
				t.Errorf("the next command: %q, want the allowed host's answer", got)
			}
			if strings.Contains(r.stderr, "wsh:") {
				t.Errorf("wsh says:\n%s", r.stderr)
			}
		})
	}
}
