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

// TestInProcessPolicyLandlock: on the landlock rung (the hostile harness's
// mount refusal), where the zygote's file server does the shell's access
// under the rung's Landlock domain, each in-process operation of
// TestInProcessPolicy on each kind of path gives what the same operation
// gives a jailed bash there: the same status and the same class of error;
// the hidden file is read by neither, and the read-only directory is left
// as it was. (The rung's answers differ from the full rung's: Landlock's
// EACCES for a write, a hidden directory that can be entered and stated.)
func TestInProcessPolicyLandlock(t *testing.T) {
	for _, u := range users {
		for _, kind := range pathKinds {
			t.Run(u.name+"/"+kind, func(t *testing.T) {
				work, env, paths := policyTree(t, u)
				env = append(env, "WSH_REQUIRE_SANDBOX=landlock")
				p := paths[kind]
				var script strings.Builder
				for _, op := range inProcessOps {
					s := strings.NewReplacer("%F", p[0], "%D", p[1]).Replace(op.script)
					fmt.Fprintf(&script, "echo '== %s'; ( %s ) 2>&1; echo status=$?\n", op.name, s)
				}
				inproc := runHostile(t, u, work, env, mountEPERM.arg, script.String())
				jailed := runHostile(t, u, work, env, mountEPERM.arg, "bash -c "+shQuote(script.String()))
				a, b := sections(inproc.stdout), sections(jailed.stdout)
				if len(a) != len(inProcessOps) || len(b) != len(inProcessOps) {
					t.Fatalf("%d and %d sections, want %d:\n%s%s\n--\n%s%s", len(a), len(b), len(inProcessOps), inproc.stdout, inproc.stderr, jailed.stdout, jailed.stderr)
				}
				for _, op := range inProcessOps {
					x, y := a[op.name], b[op.name]
					if lastLine(x) != lastLine(y) || !strings.EqualFold(errClass.FindString(x), errClass.FindString(y)) {
						t.Errorf("%s: in process %q, in the jail %q", op.name, x, y)
					}
					if kind == kindHidden && strings.Contains(x+y, "content") {
						t.Errorf("%s: the hidden file was read: %q %q", op.name, x, y)
					}
				}
				checkHostUnchanged(t, paths[kindReadOnly])
			})
		}
	}
}

// sections splits output at its "== NAME" lines.
func sections(out string) map[string]string {
	m := map[string]string{}
	name := ""
	for _, l := range strings.SplitAfter(out, "\n") {
		if n, ok := strings.CutPrefix(l, "== "); ok {
			name = strings.TrimSuffix(n, "\n")
			m[name] = ""
			continue
		}
		if name != "" {
			m[name] += l
		}
	}
	return m
}
