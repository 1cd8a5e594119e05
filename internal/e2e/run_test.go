//go:build linux && cgo

package e2e

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestHostSocketsUnderRunUnreachable: a read-only mount does not stop
// connect(2) on a socket file, and the network namespace does not cover
// unix sockets by path. The host's daemons keep theirs in /run (docker,
// dbus, postgres); the jail covers /run, so a listener there is out of
// reach. The control, opted out, reaches it.
func TestHostSocketsUnderRunUnreachable(t *testing.T) {
	dir, err := os.MkdirTemp("/run", "wsh-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	sock := dir + "/daemon.sock"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Chmod(sock, 0o777)
	const connect = `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX)
try: s.connect(sys.argv[1]); print("connected")
except OSError as e: print(e.strerror)' `
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work := workDir(t, u)
			// With unix sockets allowed, so that /run's cover is what is shown.
			out := mustRun(t, u, work, []string{"WSH_REQUIRE_SANDBOX=1", "WSH_UNIX_SOCKETS=allow"}, connect+sock+"; ls -A /run")
			if !strings.HasPrefix(out, "No such file or directory\n") || strings.TrimPrefix(out, "No such file or directory\n") != "shm\n" {
				t.Errorf("in the jail: %q, want no such file and an empty /run", out)
			}
			if out := mustRun(t, u, work, []string{"WSH_NO_SANDBOX=1"}, connect+sock); out != "connected\n" {
				t.Errorf("control, opted out: %q, want connected", out)
			}
		})
	}
}
