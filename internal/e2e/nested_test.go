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

// wsh inside a wsh jail: a script that calls wsh (a Makefile's `make
// test` of a project that uses wsh, wsh's own tests run by an agent's
// wsh). The outer jail's filter refuses namespaces and answers openat2
// with ENOSYS; the inner wsh opens its paths by hand with the same
// restrictions, steps down the ladder as on any host that refuses the
// namespaces, says so once, and confines its commands inside the outer
// jail.

// writeProbe tries to create each path its arguments name (LABEL=PATH)
// and prints LABEL=written or LABEL=ERRNO-NAME.
const writeProbe = `import errno, sys
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    try:
        open(path, "w").close()
        print(label + "=written")
    except OSError as e:
        print(label + "=" + errno.errorcode.get(e.errno, str(e.errno)))
`

// nestedScript is the outer wsh's script: its own command's status, a
// write in the extra writable path (%[2]s), then the inner wsh (%[1]s),
// without that path among its writable ones, whose commands read their
// status back and try to write to /etc and to the extra path; then the
// statuses of both.
const nestedScript = `grep -E '^Seccomp_filters:' /proc/self/status | sed 's/^/outer /'
python3 probe.py outer-extra=%[2]s/outer-made
unset WSH_WRITABLE
%[1]s -c 'cat /proc/self/status; python3 probe.py etc=/etc/wsh-nested-%[3]s extra=%[2]s/inner-made; /bin/true; exit 7'
echo inner=$?
exit 5`

// TestWshInWsh: the inner wsh's command runs with no_new_privs and a
// filter of its own over the outer's (Seccomp_filters, read from its
// /proc/self/status); a write to /etc is refused (by the outer jail's
// read-only root), a write to a path the outer allows but the inner does
// not is refused by the inner's own Landlock domain (EACCES), and neither
// file is on the host; the inner wsh's warning is printed once and names
// the landlock rung and the filter it runs under; both exit statuses
// come back.
func TestWshInWsh(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			extra := outsideDir(t, u)
			writeOwned(t, u, filepath.Join(dir, "probe.py"), writeProbe)
			token := strconv.Itoa(os.Getpid()) + "-" + u.name
			script := fmt.Sprintf(nestedScript, wshBin, extra, token)
			r := runWsh(t, u, dir, []string{"WSH_WRITABLE=" + extra}, script)
			if r.status != 5 || !strings.Contains(r.stdout, "\ninner=7\n") {
				t.Fatalf("outer status %d (want 5), inner's not 7:\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			got := probeFields(r.stdout)
			outerFilters, err1 := strconv.Atoi(got["outer Seccomp_filters"])
			innerFilters, err2 := strconv.Atoi(got["Seccomp_filters"])
			if err1 != nil || err2 != nil || innerFilters <= outerFilters {
				t.Errorf("the inner command's filters (%q) are not more than the outer's (%q): the inner wsh loaded none of its own\n%s",
					got["Seccomp_filters"], got["outer Seccomp_filters"], r.stdout)
			}
			want := map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "CapEff": caps0,
				"outer-extra": "written", "etc": "EROFS", "extra": "EACCES"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q\nstdout:\n%s\nstderr:\n%s", k, got[k], v, r.stdout, r.stderr)
				}
			}
			for _, p := range []string{"/etc/wsh-nested-" + token, filepath.Join(extra, "inner-made")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s is on the host", p)
				}
			}
			if _, err := os.Lstat(filepath.Join(extra, "outer-made")); err != nil {
				t.Errorf("the outer command's write in its writable path is not on the host: %v", err)
			}
			if strings.Count(r.stderr, "wsh: warning:") != 1 || !strings.Contains(r.stderr, "commands run on the landlock rung") ||
				!strings.Contains(r.stderr, "wsh itself runs under a seccomp filter") || !strings.Contains(r.stderr, "another wsh's jail") {
				t.Errorf("the inner wsh does not say once that it runs on the landlock rung, and why:\n%s", r.stderr)
			}
		})
	}
}

// TestWshInWshRequireSandbox: the inner wsh with WSH_REQUIRE_SANDBOX=full
// runs no command (exit 126) and says why, the filter it runs under
// included; the outer script goes on.
func TestWshInWshRequireSandbox(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			script := fmt.Sprintf(`WSH_REQUIRE_SANDBOX=full %s -c '/bin/echo ran; echo after'; echo inner=$?`, wshBin)
			r := runWsh(t, u, dir, nil, script)
			if r.status != 0 || r.stdout != "inner=126\n" {
				t.Fatalf("status %d (want 0), stdout %q (want inner=126 alone)\nstderr:\n%s", r.status, r.stdout, r.stderr)
			}
			for _, s := range []string{"jail: clone: operation not permitted", "WSH_REQUIRE_SANDBOX is set, so /bin/echo does not run",
				"wsh itself runs under a seccomp filter"} {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "wsh: warning:") {
				t.Errorf("a warning, though the inner wsh ran nothing:\n%s", r.stderr)
			}
		})
	}
}

// outsideDir makes a directory u owns outside /tmp (so outside the
// default writable paths), removed at the end of the test.
func outsideDir(t *testing.T, u user) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "wsh-nested-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if u.uid >= 0 {
		mustChown(t, d, u.uid)
	}
	return d
}

// nestedLowerScript is nestedScript for an outer wsh on a lower rung,
// with a process substitution in the inner script, and no write to /etc:
// the seccomp rung lets root write there.
const nestedLowerScript = `grep -E '^Seccomp_filters:' /proc/self/status | sed 's/^/outer /'
python3 probe.py outer-extra=%[2]s/outer-made
%[1]s -c 'cat /proc/self/status; python3 probe.py extra=%[2]s/inner-made; cat <(echo substituted); /bin/true; exit 7'
echo inner=$?
exit 5`

// TestWshInWshLowerRungs: inside an outer wsh on a lower rung (hostile
// mode 1, landlock; mode 6, seccomp), whose filter refuses setsid and
// setpgid as well as namespaces, the inner wsh finds every rung of its
// own refused and says so once: its commands run in its own process
// group (said once), confined by the outer jail alone, and no less than
// the outer's commands: no_new_privs, the outer's filters, and the
// same write refused (EACCES on the landlock rung, outside the writable
// paths). Where the outer's Landlock refuses /dev/shm, process
// substitution is unavailable, and said so.
func TestWshInWshLowerRungs(t *testing.T) {
	for _, rung := range lowerRungs {
		for _, u := range users {
			t.Run(rung.name+"/"+u.name, func(t *testing.T) {
				dir := workDir(t, u)
				extra := outsideDir(t, u)
				writeOwned(t, u, filepath.Join(dir, "probe.py"), writeProbe)
				r := runHostile(t, u, dir, nil, rung.mode, fmt.Sprintf(nestedLowerScript, wshBin, extra))
				if r.status != 5 || !strings.Contains(r.stdout, "\ninner=7\n") {
					t.Fatalf("outer status %d (want 5), inner's not 7:\nstdout:\n%s\nstderr:\n%s", r.status, r.stdout, r.stderr)
				}
				got := probeFields(r.stdout)
				refused := map[string]string{"landlock": "EACCES", "seccomp": "written"}[rung.name]
				want := map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "CapEff": caps0,
					"Seccomp_filters": got["outer Seccomp_filters"], "outer-extra": refused, "extra": refused}
				for k, v := range want {
					if got[k] != v || v == "" {
						t.Errorf("%s: %q, want %q\nstdout:\n%s\nstderr:\n%s", k, got[k], v, r.stdout, r.stderr)
					}
				}
				if _, err := os.Lstat(filepath.Join(extra, "inner-made")); (err == nil) != (refused == "written") {
					t.Errorf("the inner command's write outside the writable paths: on the host %v, want %v", err == nil, refused == "written")
				}
				said := []string{"running commands without a jail of wsh's own from now on", "wsh: setpgid is refused to wsh"}
				substituted := "substituted\n"
				if rung.name == "landlock" {
					said = append(said, "wsh: process substitution is unavailable: ")
					substituted = "cannot create fifo"
				}
				for _, s := range said {
					if strings.Count(r.stderr, s) != 1 {
						t.Errorf("stderr does not say once %q:\n%s", s, r.stderr)
					}
				}
				if strings.Count(r.stderr, "wsh: warning:") != 2 {
					t.Errorf("not one warning from each wsh:\n%s", r.stderr)
				}
				for _, l := range strings.Split(r.stderr, "\n") {
					if strings.Contains(l, "without a jail of wsh's own") && !strings.Contains(l, "wsh itself runs under a seccomp filter") {
						t.Errorf("the inner wsh's warning does not name the filter it runs under: %s", l)
					}
				}
				if !strings.Contains(r.stdout+r.stderr, substituted) {
					t.Errorf("process substitution: no %q\nstdout:\n%s\nstderr:\n%s", substituted, r.stdout, r.stderr)
				}
			})
		}
	}
}
