//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestShellSeesTheJailsProc: what the shell itself reads of /proc (a
// builtin's redirection, a redirection to a jailed command, a glob) is
// the jail's /proc, as a command's own read of it is: on the full rung
// the jail's PID 1 and processes, never the host's, by every route, in a
// session and with a jail per command; on the landlock rung (no PID
// namespace) the same as the jailed command sees.
func TestShellSeesTheJailsProc(t *testing.T) {
	host, err := os.ReadFile("/proc/1/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	hostInit := strings.TrimRight(strings.ReplaceAll(string(host), "\x00", " "), " ")
	script := `read -r b < /proc/1/cmdline; echo "builtin=$b"
echo "redirect=$(/usr/bin/tr '\0' ' ' < /proc/1/cmdline)"
echo "command=$(/bin/cat /proc/1/cmdline | /usr/bin/tr '\0' ' ')"
echo "glob=" /proc/[0-9]*
echo "listed=$(/bin/ls -d /proc/[0-9]* | /usr/bin/wc -l)"`
	for _, u := range users {
		for _, mode := range []string{"session", "command", "landlock"} {
			t.Run(u.name+"/"+mode, func(t *testing.T) {
				dir := workDir(t, u)
				var r result
				if mode == "landlock" {
					r = runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=landlock"}, mountEPERM.arg, script)
				} else {
					r = runWsh(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1", "WSH_JAIL=" + mode}, script)
				}
				got := map[string]string{}
				for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
					if k, v, ok := strings.Cut(l, "="); ok {
						got[k] = strings.TrimSpace(v)
					}
				}
				if got["command"] == "" || got["builtin"] == "" {
					t.Fatalf("no answer: %q %q", r.stdout, r.stderr)
				}
				// read strips what IFS holds: compare the first word.
				first := func(s string) string { return strings.Fields(strings.ReplaceAll(s, "\x00", " "))[0] }
				if first(got["builtin"]) != first(got["command"]) || got["redirect"] != got["command"] {
					t.Errorf("the shell's /proc/1/cmdline is not the command's: builtin %q, redirection %q, command %q",
						got["builtin"], got["redirect"], got["command"])
				}
				pids := strings.Fields(got["glob"])
				if mode == "landlock" {
					// The host's processes are what a command sees there.
					if !strings.Contains(got["glob"], "/proc/"+strconv.Itoa(os.Getpid())+" ") && !strings.HasSuffix(got["glob"], "/proc/"+strconv.Itoa(os.Getpid())) {
						t.Errorf("landlock rung: the glob does not list the host's processes, as a command does: %q", got["glob"])
					}
					return
				}
				if got["command"] == hostInit || first(got["builtin"]) == first(hostInit) {
					t.Errorf("the shell read the host's PID 1: %q %q", got["builtin"], got["redirect"])
				}
				listed, _ := strconv.Atoi(got["listed"])
				if len(pids) == 0 || len(pids) > listed+2 || strings.Contains(" "+got["glob"]+" ", fmt.Sprintf(" /proc/%d ", os.Getpid())) {
					t.Errorf("the glob of /proc is not the jail's: %d entries (a command lists %d): %.200s", len(pids), listed, got["glob"])
				}
			})
		}
	}
}
