//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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

// TestFileServerStoppedOrKilled: the jail's file server is a process of
// the jail, which a command of the same uid can signal. Stopped
// (SIGSTOP), the shell's next access does not hang: wsh lets it go on,
// and says so once; killed, the next access starts another, and wsh says
// so. Both as the
// jail's kill sees it (/bin/kill in the jail), root and 65534.
func TestFileServerStoppedOrKilled(t *testing.T) {
	script := `echo a > f
for p in /proc/[0-9]*; do read -r c < $p/comm; if [ "$c" = wsh-jail-files ]; then s=${p#/proc/}; fi; done
/bin/kill -STOP $s && echo stopped
echo b > f; echo "after stop $?"; read -r x < f; echo "read $x"
/bin/kill -KILL $s && echo killed
echo c > f; echo "after kill $?"; read -r x < f; echo "read $x"`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv, script)
			want := "stopped\nafter stop 0\nread b\nkilled\nafter kill 0\nread c\n"
			if r.status != 0 || r.stdout != want {
				t.Errorf("status %d, stdout %q, want %q\n%s", r.status, r.stdout, want, r.stderr)
			}
			if strings.Count(r.stderr, "wsh: a command stopped the jail's file server") != 1 {
				t.Errorf("the stop is not said once:\n%s", r.stderr)
			}
			if strings.Count(r.stderr, "wsh: the jail's file server ended (it exited with status 137); another does") != 1 {
				t.Errorf("the kill is not said once:\n%s", r.stderr)
			}
		})
	}
}

// TestFileServerChannelCannotBeTaken: a command that kills the jail's
// file server and watches for the next one, from its exec on, can take
// neither its channel (pidfd_getfd of its descriptor 0) nor the process
// (PTRACE_SEIZE): it is non-dumpable from the exec (the init image is
// executable, not readable), not only once its own code says so. Root
// and 65534, session.
func TestFileServerChannelCannotBeTaken(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			// The shell's accesses go on until the thief has said: the
			// first after the kill starts the server it watches for.
			script := `: > out; "$PROBE" steal-files > out &
i=0; while [ ! -s out ] && [ $i -lt 200000 ]; do [ -e /nonexistent-$i ] && echo "forged /nonexistent-$i"; i=$((i+1)); done
read -r r < out; echo "$r"`
			r := runWsh(t, u, dir, append([]string{"PROBE=" + probe}, jailEnv...), script)
			if !strings.HasPrefix(r.stdout, "refused ") || strings.Contains(r.stdout, "forged") {
				t.Errorf("the file server's channel: %q\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestShellLookupsInTheJail: the interpreter's builtins that look paths
// up themselves (type and command -v of a path, source's search of PATH,
// pwd -P) look in the jail: a file beneath a hidden directory is not
// found, nor the host's PID 1's executable; a symlink into the hidden
// directory does not resolve; a script in a hidden directory of PATH is
// not found (no message names it). Root and 65534.
func TestShellLookupsInTheJail(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			secret := filepath.Join(dir, "secret")
			mkdirOwned(t, u, secret)
			writeOwned(t, u, filepath.Join(secret, "key"), "#!/bin/sh\necho KEY\n")
			os.Chmod(filepath.Join(secret, "key"), 0o755)
			writeOwned(t, u, filepath.Join(secret, "lib.sh"), "echo SOURCED\n")
			if err := os.Symlink(filepath.Join(secret, "key"), filepath.Join(dir, "lk")); err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf(`command -v %[1]s/key; echo "v=$?"
type %[1]s/key; echo "t=$?"
command -v /proc/1/exe; echo "p1=$?"
PWD=%[2]s/lk pwd -P; echo "pw=$?"
PATH=%[1]s:$PATH source lib.sh; echo "s=$?"
type -pt %[1]s/key; command -vv %[1]s/key; command builtin type %[1]s/key; builtin builtin type -p %[1]s/key
builtin builtin command -v %[1]s/key; (PWD=%[2]s/lk; command builtin pwd -P)
f() { :; }; type f; command -v ls
type() { echo mine; }; type ls; unset -f type; type -- -p; echo "tp=$?"`, secret, dir)
			r := runWsh(t, u, dir, append([]string{"WSH_HIDE=" + secret}, jailEnv...), script)
			want := "v=1\nt=1\np1=1\npw=1\ns=1\nf is a function\n/usr/bin/ls\nmine\ntp=1\n"
			if r.stdout != want || strings.Contains(r.stderr, "lib.sh: Permission denied") {
				t.Errorf("stdout %q, want %q\n%s", r.stdout, want, r.stderr)
			}
		})
	}
}

// TestShellWriteToProtectedIsSaid: what the shell's own redirection
// makes or changes of a protected path where the jail cannot keep it
// (a missing .git/config, which wsh makes no placeholder for, on the full
// rung; an existing hook on the landlock rung) is said after it, as
// after a command. Root and 65534.
func TestShellWriteToProtectedIsSaid(t *testing.T) {
	for _, u := range users {
		for _, rung := range []string{"full", "landlock"} {
			t.Run(u.name+"/"+rung, func(t *testing.T) {
				dir := hostRepo(t, u)
				config, hook := filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".git", "hooks", "pre-commit")
				writeOwned(t, u, hook, "#!/bin/sh\n")
				var r result
				if rung == "full" {
					if err := os.Remove(config); err != nil {
						t.Fatal(err)
					}
					r = runWsh(t, u, dir, jailEnv, `echo "[core] fsmonitor=evil" > .git/config; echo "status $?"`)
				} else {
					r = runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=landlock"}, mountEPERM.arg, `echo evil >> .git/hooks/pre-commit; echo "status $?"`)
				}
				path, said := config, "made "+config
				if rung == "landlock" {
					path, said = hook, "changed "+filepath.Dir(hook) // the hooks directory is the protected path
				}
				_, err := os.Stat(path)
				wrote := err == nil && strings.Contains(r.stdout, "status 0")
				if saidIt := strings.Contains(r.stderr, "wsh: the shell's redirection "+said); wrote && !saidIt || !wrote && rung == "landlock" {
					t.Errorf("written %v, said %v: %s%s", wrote, saidIt, r.stdout, r.stderr)
				}
			})
		}
	}
}

// TestProcessSubstitutionFIFOsUnlisted: the interpreter's FIFO directory
// cannot be listed from the jail, so a background command cannot open
// another process substitution's FIFO and take its output; process
// substitution works. Root and 65534.
func TestProcessSubstitutionFIFOsUnlisted(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv, `p=<(true); d=${p%/*}; /bin/ls "$d"; echo "ls $?"; /bin/chmod 700 "$d"; echo "chmod $?"; cat <(echo ok)`)
			if r.stdout != "ls 2\nchmod 1\nok\n" || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("stdout %q\n%s", r.stdout, r.stderr)
			}
		})
	}
}

// TestFileServerStoppedAtItsStart: a command that kills the file server
// and stops the next one as it starts, before it has said a word, does
// not hang the shell: wsh has the server's pidfd from its session's word
// that it started, and lets it go on. Root and 65534.
func TestFileServerStoppedAtItsStart(t *testing.T) {
	probe := probeBin(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			script := `: > out; "$PROBE" stop-files > out &
until [ -s out ]; do [ -e /etc/hostname ]; done
read -r w p < out; echo "$w"; [ -e /etc/passwd ] && echo "after ok"`
			r := runWsh(t, u, workDir(t, u), append([]string{"PROBE=" + probe}, jailEnv...), script)
			if r.status != 0 || r.stdout != "stopped\nafter ok\n" || !strings.Contains(r.stderr, "wsh: a command stopped the jail's file server") {
				t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestWshInWshHomeNotOurs: wsh inside wsh's jail as 65534 with HOME=/root
// (root's, which the outer jail shows as the overflow uid, 65534's own
// number): the inner wsh's file access and commands work, as with a home
// of its own.
func TestWshInWshHomeNotOurs(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			script := fmt.Sprintf(`%s -c '[ -e /etc/passwd ] && echo e-ok; /bin/echo abs-ok; echo hi > g2; read -r l < g2; echo "read $l"'; echo "inner=$?"`, wshBin)
			r := runWsh(t, u, dir, []string{"HOME=/root"}, script)
			if want := "e-ok\nabs-ok\nread hi\ninner=0\n"; r.stdout != want {
				t.Errorf("stdout %q, want %q\n%s", r.stdout, want, r.stderr)
			}
		})
	}
}

// TestEmptyPathIsMissing: an empty path (an unset variable's) is a file
// that does not exist, as bash has it: test, a redirection, read and
// source fail with status 1, and pwd -P with PWD empty prints the working
// directory. The file server is not asked (it would refuse the request).
func TestEmptyPathIsMissing(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			r := runWsh(t, u, dir, jailEnv, `test -e ""; echo "st=$?"; [ -r "" ]; echo "r=$?"; cat < ""; echo "c=$?"
read x < ""; echo "rd=$?"; source ""; echo "s=$?"; (PWD= pwd -P)`)
			if want := "st=1\nr=1\nc=1\nrd=1\ns=1\n" + dir + "\n"; r.status != 0 || r.stdout != want || strings.Contains(r.stderr, "file server") {
				t.Errorf("status %d, stdout %q, want %q\n%s", r.status, r.stdout, want, r.stderr)
			}
		})
	}
}

// TestFileServerKilledUnderLoad: the file server killed once while eight
// background jobs do redirections, globs and tests: every access it was
// doing is retried, every job runs to its end, and the script is not
// stopped. Root and 65534.
func TestFileServerKilledUnderLoad(t *testing.T) {
	script := `for i in 1 2 3 4 5 6 7 8; do (n=0; while [ $n -lt 150 ]; do echo $n > f$i; read -r l < f$i; : f*; test -e f$i || echo "missing f$i"; n=$((n+1)); done; echo "done $i") & done
for p in /proc/[0-9]*; do read -r c < $p/comm; if [ "$c" = wsh-jail-files ]; then s=${p#/proc/}; fi; done
/bin/kill -KILL $s
wait; echo end`
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			r := runWsh(t, u, workDir(t, u), jailEnv, script)
			if r.status != 0 || strings.Count(r.stdout, "done ") != 8 || !strings.HasSuffix(r.stdout, "end\n") ||
				strings.Contains(r.stdout, "missing") || strings.Contains(r.stderr, "the script stops") {
				t.Errorf("status %d\n%s%s", r.status, r.stdout, r.stderr)
			}
		})
	}
}

// TestLookupsFailClosedWithoutJail: under WSH_REQUIRE_SANDBOX, where the
// host refuses the jail, type, command -v and pwd -P do not look on the
// host: the script stops, as at a command; ~root is left as written.
func TestLookupsFailClosedWithoutJail(t *testing.T) {
	for _, u := range users {
		for _, c := range []struct{ script, name string }{
			{"type /bin/ls; echo after", "/bin/ls"},
			{"command -v ls; echo after", "ls"},
			{"pwd -P; echo after", ""},
		} {
			t.Run(u.name+"/"+strings.Fields(c.script)[0], func(t *testing.T) {
				dir := workDir(t, u)
				r := runHostile(t, u, dir, []string{"WSH_REQUIRE_SANDBOX=1"}, cloneEPERM.arg, c.script)
				name := c.name
				if name == "" {
					name = dir
				}
				if r.status != 126 || r.stdout != "" || !strings.Contains(r.stderr, "WSH_REQUIRE_SANDBOX is set, so the shell does not open "+name+"; the script stops") {
					t.Errorf("status %d, stdout %q\n%s", r.status, r.stdout, r.stderr)
				}
			})
		}
		t.Run(u.name+"/tilde", func(t *testing.T) {
			r := runHostile(t, u, workDir(t, u), []string{"WSH_REQUIRE_SANDBOX=1"}, cloneEPERM.arg, "echo ~root")
			if r.stdout != "~root\n" {
				t.Errorf("~root with no jail: %q\n%s", r.stdout, r.stderr)
			}
		})
	}
}
