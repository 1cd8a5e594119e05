//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The kinds of path the in-process policy is checked against.
const (
	kindWritable = "writable"  // beneath the working directory
	kindReadOnly = "read-only" // outside every writable path
	kindHidden   = "hidden"    // under WSH_HIDE
	kindEscape   = "escape"    // a symlink in the working directory to outside
)

var pathKinds = []string{kindWritable, kindReadOnly, kindHidden, kindEscape}

// An inProcessOp is one operation that mvdan.cc/sh runs in wsh's own
// process. %F is replaced by a file of the kind, %D by a directory.
type inProcessOp struct {
	name, script string
	// want is the error each kind gives: "" for none.
	want map[string]string
	// wantOut is a regexp stdout must match, per kind, where it matters.
	wantOut map[string]string
}

const (
	erofs  = "Read-only file system"
	eacces = "Permission denied"
)

var (
	writeWant = map[string]string{kindWritable: "", kindReadOnly: erofs, kindHidden: eacces, kindEscape: erofs}
	// appendWant: appending to an existing file checks its permission
	// before the read-only mount, so the unprivileged user gets EACCES.
	appendWant = map[string]string{kindWritable: "", kindReadOnly: "status", kindHidden: eacces, kindEscape: "status"}
	readWant   = map[string]string{kindWritable: "", kindReadOnly: "", kindHidden: eacces, kindEscape: ""}
	readOut    = map[string]string{kindWritable: "content", kindReadOnly: "content", kindHidden: "^status=1\n$", kindEscape: "content"}
)

var inProcessOps = []inProcessOp{
	{"redirect >", "echo x > %F", writeWant, nil},
	{"redirect >>", "echo x >> %F", appendWant, nil},
	{"redirect &>", "echo x &> %F", writeWant, nil},
	{"redirect &>>", "echo x &>> %F", appendWant, nil},
	{"redirect new file", "echo x > %D/new", writeWant, nil},
	{"redirect <", "cat < %F", readWant, readOut},
	{"read <", `read -r l < %F && echo "$l"`, readWant, readOut},
	{"source", ". %F", readWant, readOut},
	{"process substitution", `cat <(cat < %F)`, stderrOnly(readWant), map[string]string{kindWritable: "content", kindHidden: "^status=0\n$"}},
	{"test -r", "test -r %F", map[string]string{kindWritable: "", kindReadOnly: "", kindHidden: "status", kindEscape: ""}, nil},
	{"test -w", "test -w %F", map[string]string{kindWritable: "", kindReadOnly: "status", kindHidden: "status", kindEscape: "status"}, nil},
	{"cd", "cd %D", map[string]string{kindWritable: "", kindReadOnly: "", kindHidden: "status", kindEscape: ""}, nil},
	{"test -e beneath", "test -e %D/file", map[string]string{kindWritable: "", kindReadOnly: "", kindHidden: "status", kindEscape: ""}, nil},
	{"glob", "echo %D/*", nil, map[string]string{kindWritable: "/file\n", kindReadOnly: "/file\n", kindHidden: `/\*\n`, kindEscape: "/file\n"}},
}

// policyTree lays out the paths of each kind for u and returns the working
// directory, the environment (WSH_HIDE) and each kind's file and directory.
func policyTree(t *testing.T, u user) (string, []string, map[string][2]string) {
	t.Helper()
	work := workDir(t, u)
	ro, err := os.MkdirTemp("/var/tmp", "wsh-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ro) })
	os.Chmod(ro, 0o755)
	for _, d := range []string{filepath.Join(work, "d"), filepath.Join(work, ".secret"), ro} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "file"), []byte("echo content\n"), 0o644)
		if u.uid >= 0 && d != ro {
			os.Chown(d, u.uid, u.uid)
			os.Chown(filepath.Join(d, "file"), u.uid, u.uid)
		}
	}
	os.Symlink(filepath.Join(ro, "file"), filepath.Join(work, "esc"))
	os.Symlink(ro, filepath.Join(work, "escdir"))
	paths := map[string][2]string{
		kindWritable: {"d/file", "d"},
		kindReadOnly: {filepath.Join(ro, "file"), ro},
		kindHidden:   {".secret/file", ".secret"},
		kindEscape:   {"esc", "escdir"},
	}
	return work, []string{"WSH_HIDE=" + filepath.Join(work, ".secret")}, paths
}

var errClass = regexp.MustCompile("(?i)" + erofs + "|" + eacces + "|No such file or directory")

// stderrOnly marks errors that show on stderr only: the status is another
// command's (process substitution's is the outer command's).
func stderrOnly(want map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range want {
		if v != "" {
			v = "stderr:" + v
		}
		out[k] = v
	}
	return out
}

// TestInProcessPolicy runs each in-process operation on each kind of path,
// in wsh and, through bash -c, inside the jail; both must give the expected
// result, and agree.
func TestInProcessPolicy(t *testing.T) {
	for _, u := range users {
		for _, op := range inProcessOps {
			for _, kind := range pathKinds {
				t.Run(fmt.Sprintf("%s/%s/%s", u.name, op.name, kind), func(t *testing.T) {
					work, env, paths := policyTree(t, u)
					env = append(env, "WSH_REQUIRE_SANDBOX=1")
					p := paths[kind]
					script := strings.NewReplacer("%F", p[0], "%D", p[1]).Replace(op.script) + "; echo status=$?"
					inproc := runWsh(t, u, work, env, script)
					jailed := runWsh(t, u, work, env, "bash -c "+shQuote(script))
					checkOp(t, op, kind, "in process", inproc)
					checkOp(t, op, kind, "in the jail", jailed)
					if a, b := errClass.FindString(inproc.stderr), errClass.FindString(jailed.stderr); !strings.EqualFold(a, b) {
						t.Errorf("in process %q, in the jail %q", inproc.stderr, jailed.stderr)
					}
					if a, b := lastLine(inproc.stdout), lastLine(jailed.stdout); a != b {
						t.Errorf("in process %q, in the jail %q", inproc.stdout, jailed.stdout)
					}
					checkHostUnchanged(t, paths[kindReadOnly])
				})
			}
		}
	}
}

func checkOp(t *testing.T, op inProcessOp, kind, where string, r result) {
	t.Helper()
	want := op.want[kind]
	failed := !strings.HasSuffix(r.stdout, "status=0\n")
	if w, ok := strings.CutPrefix(want, "stderr:"); ok {
		want, failed = w, errClass.MatchString(r.stderr)
	}
	switch {
	case want == "" && failed:
		t.Errorf("%s: failed: %q %q", where, r.stdout, r.stderr)
	case want != "" && !failed:
		t.Errorf("%s: succeeded, want %s: %q", where, want, r.stdout)
	case want != "" && want != "status" && !strings.Contains(r.stderr, want):
		t.Errorf("%s: stderr %q, want %q", where, r.stderr, want)
	}
	if re := op.wantOut[kind]; re != "" && !regexp.MustCompile(re).MatchString(r.stdout) {
		t.Errorf("%s: stdout %q does not match %q", where, r.stdout, re)
	}
}

// checkHostUnchanged: the read-only directory holds its one file, intact.
func checkHostUnchanged(t *testing.T, ro [2]string) {
	t.Helper()
	ents, _ := os.ReadDir(ro[1])
	b, _ := os.ReadFile(ro[0])
	if len(ents) != 1 || string(b) != "echo content\n" {
		t.Errorf("the host's read-only directory changed: %d entries, file %q", len(ents), b)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestInProcessPolicyModes: under WSH_NO_SANDBOX the in-process policy is
// off too; on a host that refuses the jail it still applies, and the one
// warning says so; there the external cat runs on the landlock rung, which
// cannot read the hidden file either.
func TestInProcessPolicyModes(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			work, env, paths := policyTree(t, u)
			target := paths[kindWritable][1] + "/new"
			hidden := paths[kindHidden][0]
			script := fmt.Sprintf("cat %s; cat < %s; echo x > %s/new; echo status=$?", hidden, hidden, paths[kindReadOnly][1])

			r := runHostile(t, u, work, env, mountEPERM.arg, script+"; echo y > "+target)
			// Done in the jail: on the landlock rung the kernel refuses
			// the write with Landlock's EACCES, not the full rung's EROFS.
			if !strings.Contains(r.stdout, "status=1") || !strings.Contains(r.stderr, "wsh: "+paths[kindReadOnly][1]+"/new: "+eacces) ||
				!strings.Contains(r.stderr, "wsh: "+hidden+": "+eacces) {
				t.Errorf("degraded: the in-process policy did not apply:\n%s%s", r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "builtins, redirections and globs are done under the same Landlock domain") || !strings.Contains(r.stderr, "landlock rung") {
				t.Errorf("degraded: the warning does not say the landlock rung and that the shell's access is done under it:\n%s", r.stderr)
			}
			if strings.Contains(r.stdout, "content") || !strings.Contains(r.stderr, "cat: "+hidden+": Permission denied") {
				t.Errorf("degraded: the cat on the landlock rung read the hidden file: %q %q", r.stdout, r.stderr)
			}

			r = runWsh(t, u, work, append(env, "WSH_NO_SANDBOX=1"), script)
			if u.uid < 0 && !strings.Contains(r.stdout, "status=0") {
				t.Errorf("opted out: the in-process policy still refused the write:\n%s%s", r.stdout, r.stderr)
			}
			if strings.Count(r.stdout, "content") != 2 || r.stderr != "" && u.uid < 0 {
				t.Errorf("opted out: the hidden file should be readable in and out of process: %q %q", r.stdout, r.stderr)
			}
		})
	}
}
