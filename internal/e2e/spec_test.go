//go:build linux && cgo

package e2e

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLongArgvAndNoSpecInCmdline: the spec reaches the jail init on a
// descriptor, not in argv, so a target's argv may be as long as bash allows
// (one argv string is limited to 128 KiB) and the jail's /proc/1/cmdline
// shows no spec (writable and hidden paths, the filter).
func TestLongArgvAndNoSpecInCmdline(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			out := mustRun(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1", "WSH_HIDE=" + dir + "/h"},
				`/bin/echo $(seq 1 30000) | wc -c; cat /proc/1/cmdline | od -c | head -1`)
			if !strings.HasPrefix(out, "168894\n") {
				t.Errorf("a 168894-byte argv: %q", out)
			}
			if !strings.Contains(out, `w   s   h   -   j   a   i   l   -   i   n   i   t  \0`) || strings.Contains(out, "{") {
				t.Errorf("/proc/1/cmdline: %q, want wsh-jail-init alone", out)
			}
		})
	}
}

// TestDeviceNodesDoNotOpen: a device node already on the host's disks
// (here in the writable directory) does not open in the jail: the root and
// the writable binds are nodev. A read-only mount alone does not refuse a
// character device.
func TestDeviceNodesDoNotOpen(t *testing.T) {
	dir := workDir(t, root)
	node := filepath.Join(dir, "null-node")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	r := runWsh(t, root, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, "sh -c 'echo x > ./null-node'; echo st=$?")
	if !strings.Contains(r.stdout, "st=2") || !strings.Contains(r.stderr, "Permission denied") {
		t.Errorf("a device node in the writable directory: %q %q, want refused (EACCES)", r.stdout, r.stderr)
	}
}
