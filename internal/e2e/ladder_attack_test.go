//go:build linux && cgo

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notMade stands for an attempt the probe did not get to make.
const notMade = "(not made)"

// onLowerRung is what an attempt of the attack probe gives on the landlock
// rung where that differs from the full jail's (expectations): there is no
// namespace, so the host's pid 1, network devices and files are the ones
// in view, and what refuses is Landlock (EACCES on a path, EPERM on a
// signal or an abstract socket out of the domain), wsh's filter (the
// network, ptrace and session groups of the lower rungs) and the empty
// capability sets. The host's own refusals (the harness's filter, a
// default Docker profile) come on top, and are what the control shows.
var onLowerRung = map[string]want{
	// WSH_NETWORK=none: the filter refuses every socket but AF_UNIX.
	"socket(AF_INET)": all("EACCES"),
	// pid 1 is the host's init, out of the Landlock domain.
	"rt_sigqueueinfo(1, 0, SI_QUEUE)":      all("EPERM"),
	"rt_tgsigqueueinfo(1, 1, 0, SI_QUEUE)": all("EPERM"),
	// No new terminal: Landlock grants no /dev/ptmx (docs/sandbox.md,
	// "The ladder"), so the probe's terminal attempts cannot start.
	"ioctl(TIOCSTI)":           all("error: open /dev/ptmx: permission denied"),
	"ioctl(TIOCSTI|high bits)": all(notMade),
	"ioctl(TIOCLINUX)":         all(notMade),
	"ioctl(TIOCSETD)":          all(notMade),
	"ioctl(TIOCEXCL)":          all(notMade),
	"ioctl(TCXONC, TCOOFF)":    all(notMade),
	"ioctl(TCXONC, TCIOFF)":    all(notMade),
	"ioctl(TCXONC, TCOON)":     all(notMade),
	"ioctl(TIOCGWINSZ)":        all(notMade),

	"create /etc/…":                          all("EACCES"),
	"create /usr/…":                          all("EACCES"),
	"open /sys/class/net/lo/mtu for writing": all("EACCES"),
	"open /sys/kernel/mm/transparent_hugepage/enabled for writing": all("EACCES"),
	"open /proc/sysrq-trigger for writing":                         all("ENOENT"),
	"open /proc/sys/kernel/core_pattern for writing":               all("EACCES"),
	"write 0 to /proc/sys/vm/drop_caches":                          all("open: EACCES"),

	"connect(host loopback TCP)": all("EACCES"),
	"kill(host pid, 0)":          all("EPERM"),

	// The ptrace group of the lower rungs refuses every ptrace and
	// process_vm_*: with no PID namespace, a process of the command's own
	// user outside wsh would be in reach.
	"ptrace(PTRACE_ATTACH, host pid)":  all("EPERM"),
	"process_vm_readv(host pid)":       all("EPERM"),
	"ptrace(PTRACE_ATTACH, 1)":         all("EPERM"),
	"process_vm_readv(1)":              all("EPERM"),
	"ptrace(PTRACE_ATTACH, own child)": all("EPERM"),
	"process_vm_readv(self)":           all("EPERM"),
}

// lowerControl is what the attempts give as 65534 on the same three hosts
// with wsh opted out, which is what they gave before the ladder, where the
// three agree: each differs from the rung's, so the refusal is wsh's.
var lowerControl = map[string]string{
	"socketpair(AF_VSOCK)":            "ENOTSUP",
	"socket(AF_INET)":                 "ok",
	"socket(AF_UNIX)":                 "ok",
	"socketpair(AF_UNIX, SOCK_DGRAM)": "ok",
	"socketpair(AF_UNIX, SOCK_RAW)":   "ok",
	"name_to_handle_at":               "ok",

	"rt_sigqueueinfo(child, SIGSEGV, SI_QUEUE)":         "ok",
	"rt_tgsigqueueinfo(child, child, SIGBUS, SI_QUEUE)": "ok",
	"pidfd_send_signal(child, 0, siginfo)":              "ok",
	"fcntl(F_SETSIG, SIGSEGV)":                          "ok",

	"chmod(S_ISUID)":            "ok S_ISUID",
	"open(O_CREAT, S_ISUID)":    "ok S_ISUID",
	"openat2(O_CREAT, S_ISUID)": "ok S_ISUID",
	"open(O_TMPFILE, S_ISUID)":  "ok",
	"ioctl(TIOCSTI)":            "ok",
	"ioctl(TIOCSETD)":           "ok",

	"connect(host loopback TCP)":       "ok",
	"connect(host abstract unix)":      "ok",
	"kill(host pid, 0)":                "ok",
	"fcntl(fd>=3)":                     "open",
	"ptrace(PTRACE_ATTACH, host pid)":  "ok",
	"ptrace(PTRACE_ATTACH, own child)": "ok",
	"process_vm_readv(self)":           "ok",
}

// attackHostile runs the attack probe with args through `wsh -c` on a host
// made hostile in mode, as u, with env added, and returns what it printed
// and what wsh said.
func attackHostile(t *testing.T, u user, mode string, env []string, files []*os.File, args ...string) (map[string]string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := strings.Join(append([]string{attackBin(t)}, args...), " ")
	cmd := hostileCmd(t, ctx, u, workDir(t, u), env, mode, script)
	cmd.ExtraFiles = files
	return probeOutput(t, cmd)
}

// sleeperOf starts a process of u's outside wsh, for the probe to signal
// and trace, and ends it when the test does.
func sleeperOf(t *testing.T, u user) int {
	t.Helper()
	s := exec.Command("sleep", "300")
	if u.uid >= 0 {
		s.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Process.Kill(); s.Wait() })
	return s.Process.Pid
}

// hostFacts are what the landlock rung leaves as the host has it: the
// bounding set an unprivileged uid cannot drop (it has no CAP_SETPCAP;
// with no_new_privs nothing can raise a capability from it), and the
// network devices (no network namespace).
func hostFacts(t *testing.T) (capBnd, netDevs string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			capBnd = strings.TrimSpace(v)
		}
	}
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	var devs []string
	for _, e := range ents {
		devs = append(devs, e.Name())
	}
	return capBnd, strings.Join(devs, " ")
}

// TestLadderAttack runs the attack probe on the landlock rung of the hosts
// that refuse the full jail: namespaces refused at clone (mode 1), mounts
// refused with EACCES in the namespace (mode 4, as AppArmor's restriction
// of user namespaces does), a default Docker container with moby's real
// profile and Docker's capabilities (mode 7); as root and as 65534; with
// WSH_REQUIRE_SANDBOX=landlock, so below the rung the probe never runs.
// Every attempt is checked against the rung's expectation; the warning must
// name the rung. As 65534, the control runs the probe on the same host with
// wsh opted out (what these hosts gave before the ladder) and shows which
// refusals are wsh's. There is no control as root: the probe never runs
// unconfined as root. 65534 runs with a home of its own, and with
// HOME=/root, as `sudo -u` and setpriv leave it.
func TestLadderAttack(t *testing.T) {
	capBnd, netDevs := hostFacts(t)
	runs := []struct {
		name string
		u    user
		env  []string
	}{{root.name, root, nil}, {unprivileged.name, unprivileged, nil}, {unprivileged.name + "/HOME=root", unprivileged, []string{"HOME=/root"}}}
	for _, r := range runs {
		u := r.u
		for _, mode := range []string{"1", "4", "7"} {
			t.Run(r.name+"/mode"+mode, func(t *testing.T) {
				h := newHostSide(t)
				// A process of the command's own user outside wsh stands
				// for the host's pid and for the full jail's pid 1.
				pid := strconv.Itoa(sleeperOf(t, u))
				args := []string{"-hostpid", pid, "-init", pid, "-tcp", h.tcp.Addr().String(), "-abstract", h.name, "-ptrace"}
				jailed, stderr := attackHostile(t, u, mode, append([]string{"WSH_REQUIRE_SANDBOX=landlock"}, r.env...), h.files, args...)
				if got := h.accepted(t); len(got) > 0 {
					t.Errorf("the host's listeners accepted connections from the landlock rung: %q", got)
				}
				if !strings.Contains(stderr, "commands run on the landlock rung") || strings.Count(stderr, "wsh: warning:") != 1 {
					t.Errorf("the warning does not name the landlock rung once:\n%s", stderr)
				}
				var control map[string]string
				if u.uid >= 0 {
					control, _ = attackHostile(t, u, mode, append([]string{"WSH_NO_SANDBOX=1"}, r.env...), h.files, args...)
					h.accepted(t) // the control's connections
				}
				facts := map[string]want{
					"status:CapBnd":  per(caps0, capBnd),
					"/sys/class/net": all(netDevs),
				}
				checkLower(t, u, jailed, control, facts)
			})
		}
	}
}

// checkLower compares the rung's run with its expectations (facts, then
// onLowerRung, then the full jail's), and the control with lowerControl.
func checkLower(t *testing.T, u user, jailed, control map[string]string, facts map[string]want) {
	t.Helper()
	for _, e := range expectations {
		w, ok := facts[e.attempt]
		if !ok {
			w, ok = onLowerRung[e.attempt]
		}
		if !ok {
			w = e.jail
		}
		got, made := jailed[e.attempt]
		if !made {
			got = notMade
		}
		if !w.holds(u, got) {
			t.Errorf("%s on the landlock rung: %q, want %q", e.attempt, got, w.of(u))
		}
		if control == nil {
			continue
		}
		if c, ok := lowerControl[e.attempt]; ok && control[e.attempt] != c {
			t.Errorf("%s in the control: %q, want %q", e.attempt, control[e.attempt], c)
		}
		t.Logf("%-62s rung %-16q control %q", e.attempt, got, control[e.attempt])
	}
	for a := range jailed {
		if !slices.ContainsFunc(expectations, func(e expectation) bool { return e.attempt == a }) {
			t.Errorf("%s: an attempt with no expectation (gave %q)", a, jailed[a])
		}
	}
}

// TestLadderTools runs the tools agents use (toolChecks) on the landlock
// rung of the three hosts, as root and as 65534. strace is the exception,
// and must say why: the lower rungs refuse ptrace (with no PID namespace a
// process of the same user outside wsh would be in reach).
func TestLadderTools(t *testing.T) {
	path := wshCmd(t.Context(), root, "/", nil).Env[0]
	env := []string{"WSH_REQUIRE_SANDBOX=landlock"}
	for _, u := range users {
		for _, mode := range []string{"1", "4", "7"} {
			t.Run(u.name+"/mode"+mode, func(t *testing.T) {
				for _, c := range toolChecks {
					if _, err := lookPath(path, c.bin); err != nil {
						t.Logf("%s is not installed on this host (%v): not run", c.bin, err)
						continue
					}
					dir := workDir(t, u)
					r := runHostile(t, u, dir, env, mode, c.script)
					if c.bin == "strace" {
						if r.status == 0 || !strings.Contains(r.stderr, "Operation not permitted") {
							t.Errorf("strace on the landlock rung: status %d, want a refusal that says so:\n%s", r.status, r.stderr)
						}
						continue
					}
					if r.status != 0 || !c.want(r.stdout) {
						t.Errorf("%s on the landlock rung: status %d, printed %q\nstderr:\n%s", c.script, r.status, r.stdout, r.stderr)
					}
				}
			})
		}
	}
}

// TestLadderHostUnixSocketPath is TestContainmentHostUnixSocketPath on the
// landlock rung of a default Docker container (mode 7), as root and as
// 65534: by default no host socket is reachable (the unix group);
// WSH_UNIX_SOCKETS=allow makes them reachable as documented, but not while
// WSH_HIDE names a path: Landlock does not govern connect(2) to a socket's
// path, so a socket beneath a hidden path (gpg-agent's in ~/.gnupg) would be
// in reach, and the rung withholds the setting and says so.
func TestLadderHostUnixSocketPath(t *testing.T) {
	const a = "connect(host unix socket path)"
	allow := "WSH_UNIX_SOCKETS=allow"
	floor := "WSH_REQUIRE_SANDBOX=landlock"
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			varTmp := socketDir(t, "/var/tmp")
			hidden := socketDir(t, filepath.Dir(wshBin))
			for _, c := range []struct {
				name, sock string
				env        []string
				refused    bool
			}{
				{"/var/tmp", filepath.Join(varTmp, "s"), []string{floor}, true},
				{"allowed, and hidden by WSH_HIDE", filepath.Join(hidden, "s"), []string{floor, allow, "WSH_HIDE=" + hidden}, true},
				{"allowed, another path hidden", filepath.Join(varTmp, "s3"), []string{floor, allow, "WSH_HIDE=" + hidden}, true},
				{"allowed (documented as reachable)", filepath.Join(varTmp, "s2"), []string{floor, allow}, false},
			} {
				l := unixListener(t, c.sock)
				r, stderr := attackHostile(t, u, "7", c.env, nil, "-only", "net", "-unix", c.sock)
				n := acceptedUnix(l)
				t.Logf("%-36s rung %q, accepted %d", c.name, r[a], n)
				switch {
				case c.refused && (r[a] != "EPERM" || n > 0):
					t.Errorf("HOLE: %s: a host socket is reachable from the landlock rung (%q, accepted %d)", c.name, r[a], n)
				case !c.refused && (r[a] != "ok" || n != 1):
					t.Errorf("%s: %q, accepted %d; want it reachable, as documented", c.name, r[a], n)
				}
				withheld := strings.Contains(stderr, "WSH_UNIX_SOCKETS=allow is withheld while WSH_HIDE is set")
				if want := slices.Contains(c.env, allow) && c.refused; withheld != want {
					t.Errorf("%s: the warning says the setting is withheld: %v, want %v\n%s", c.name, withheld, want, stderr)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				doc := hostileCmd(t, ctx, u, workDir(t, u), c.env, "7", "")
				doc.Args = append(doc.Args[:4], "doctor", "--json")
				out, _ := doc.Output() // doctor's status says the rung, not whether it ran
				cancel()
				var rep struct {
					Config struct {
						Withheld bool `json:"unix_sockets_withheld"`
					} `json:"config"`
				}
				if err := json.Unmarshal(out, &rep); err != nil {
					t.Fatalf("%s: wsh doctor --json: %v\n%s", c.name, err, out)
				}
				if want := slices.Contains(c.env, allow) && c.refused; rep.Config.Withheld != want {
					t.Errorf("%s: doctor's unix_sockets_withheld is %v, want %v", c.name, rep.Config.Withheld, want)
				}
			}
		})
	}
}
