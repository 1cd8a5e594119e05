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
