//go:build linux && cgo

package launch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wsh/degrade"
	"wsh/internal/proto"
	"wsh/internal/seccomp"
	"wsh/jail"
)

// TestMain makes this test binary a jail init too: Run re-executes
// /proc/self/exe, which is this binary.
func TestMain(m *testing.M) {
	jail.Init()
	os.Exit(m.Run())
}

// hangLimit is how long Run may take before the test calls it a hang.
const hangLimit = 10 * time.Second

// runWithin runs req and fails the test, rather than hanging it, when Run
// does not return within hangLimit. It returns the outcome and how long
// Run took.
func runWithin(t *testing.T, req *Request) (degrade.Facts, time.Duration) {
	t.Helper()
	done := make(chan degrade.Facts, 1)
	start := time.Now()
	go func() { done <- Run(context.Background(), req) }()
	select {
	case out := <-done:
		return out, time.Since(start)
	case <-time.After(hangLimit):
		t.Fatalf("Run did not return within %v: the parent is blocked on the sentinel", hangLimit)
		return degrade.Facts{}, 0
	}
}

// jailRequest is a request to run argv in a jail whose working directory
// is a fresh, writable temporary directory.
func jailRequest(t testing.TB, argv ...string) (*Request, *bytes.Buffer) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	id, err := proto.NewPathID(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The full jail's filter: without the lower rungs' groups, and
	// without the git config group, whose listener only package gitmediate answers
	// (no Request.Git here).
	filter, err := seccomp.CompileFilter(append((&proto.Spec{Rung: degrade.RungFull}).SkipGroups(), proto.GitGroup)...)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	return &Request{
		Spec:   proto.Spec{Writable: []proto.PathID{id}, Filter: filter, Dir: dir, Path: path, Args: argv},
		Stderr: &stderr,
	}, &stderr
}

// TestRunReturnsWithTheChild: a jail that sends no report does not block
// the parent beyond the child's own life.
func TestRunReturnsWithTheChild(t *testing.T) {
	req, stderr := jailRequest(t, "sleep", "0.2")
	out, took := runWithin(t, req)
	if out.StartErr != nil || out.Report != nil || out.Status != 0 {
		t.Fatalf("outcome %+v, want status 0 and no report\nstderr:\n%s", out, stderr)
	}
	if took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("Run took %v for a 0.2 s child", took)
	}
}

// TestRunSilentChild: jails that end without a report, the jail init
// itself included, give the init's status and no report, promptly.
func TestRunSilentChild(t *testing.T) {
	cases := []struct {
		name   string
		argv   []string
		status int
		spec   func(*proto.Spec)
	}{
		// The init refuses an incomplete spec before any setup step, and
		// exits without writing a report.
		{"init exits before setup", []string{"sh"}, proto.ReservedStatus, func(s *proto.Spec) { s.Path = "" }},
		{"target killed", []string{"sh", "-c", "kill -KILL $$"}, 128 + int(syscall.SIGKILL), nil},
		{"target exits with the reserved status", []string{"sh", "-c", "exit 125"}, proto.ReservedStatus, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, stderr := jailRequest(t, c.argv...)
			if c.spec != nil {
				c.spec(&req.Spec)
			}
			out, _ := runWithin(t, req)
			if out.StartErr != nil || out.Report != nil || out.Status != c.status {
				t.Errorf("outcome %+v, want status %d and no report\nstderr:\n%s", out, c.status, stderr)
			}
			if v := degrade.Classify(out); v.Kind != degrade.Ran {
				t.Errorf("classified %v, want ran", v.Kind)
			}
		})
	}
}

// TestRunReportsARefusedStep is the other side: a setup step that fails
// does reach the parent, with its step and errno.
func TestRunReportsARefusedStep(t *testing.T) {
	req, stderr := jailRequest(t, "true")
	missing := filepath.Join(req.Spec.Dir, "missing")
	req.Spec.Writable = append(req.Spec.Writable, proto.PathID{Path: missing})
	out, _ := runWithin(t, req)
	want := degrade.Report{Step: degrade.StepDetach, Errno: syscall.ENOENT}
	if out.Report == nil || *out.Report != want || out.Status != proto.ReservedStatus {
		t.Fatalf("outcome %+v (report %v), want report %+v and status %d\nstderr:\n%s",
			out, out.Report, want, proto.ReservedStatus, stderr)
	}
}

// TestRunWithoutAFilterFails: the init has no seccomp compiler of its own;
// a spec without a compiled program fails at the seccomp step, loudly,
// instead of running the target without a filter.
func TestRunWithoutAFilterFails(t *testing.T) {
	req, stderr := jailRequest(t, "true")
	req.Spec.Filter = nil
	out, _ := runWithin(t, req)
	want := degrade.Report{Step: degrade.StepSeccomp, Errno: syscall.EINVAL}
	if out.Report == nil || *out.Report != want || out.Status != proto.ReservedStatus {
		t.Fatalf("outcome %+v (report %v), want report %+v and status %d\nstderr:\n%s",
			out, out.Report, want, proto.ReservedStatus, stderr)
	}
	if v := degrade.Classify(out); v.Kind != degrade.Failed {
		t.Errorf("classified %v, want failed", v.Kind)
	}
}

// TestReadReport: only exactly one whole valid report counts.
func TestReadReport(t *testing.T) {
	valid := proto.EncodeReport(degrade.Report{Step: degrade.StepMountPrivate, Errno: syscall.EPERM})
	cases := []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"one report", valid[:], true},
		{"nothing", nil, false},
		{"short", valid[:proto.ReportSize-1], false},
		{"one byte more", append(valid[:], 0), false},
		{"two reports", append(valid[:], valid[:]...), false},
		{"text", []byte(strings.Repeat("x", proto.ReportSize)), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rd, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if _, err := wr.Write(c.b); err != nil {
				t.Fatal(err)
			}
			wr.Close()
			started := false
			r, ok := proto.DecodeReport(readSentinel(rd, func() { started = true }))
			if ok != c.ok || (ok && r != degrade.Report{Step: degrade.StepMountPrivate, Errno: syscall.EPERM}) {
				t.Errorf("readSentinel(%q) = %+v, %v; want ok %v", c.b, r, ok, c.ok)
			}
			if started != (len(c.b) == 0) {
				t.Errorf("readSentinel(%q): started called %v", c.b, started)
			}
		})
	}
}

// TestRunDoesNotDependOnTheBinarysMode: the jail init runs from a sealed
// copy of the binary, so a binary made unexecutable after wsh started (by
// a command of another session, say) cannot make a jail fail with EACCES,
// which would read as the host refusing it.
func TestRunDoesNotDependOnTheBinarysMode(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(self)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := jailRequest(t, "true")
	if out, _ := runWithin(t, req); out.StartErr != nil || out.Report != nil || out.Status != 0 {
		t.Fatalf("before: %+v", out)
	}
	if err := os.Chmod(self, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(self, fi.Mode().Perm())
	req, stderr := jailRequest(t, "true")
	if out, _ := runWithin(t, req); out.StartErr != nil || out.Report != nil || out.Status != 0 {
		t.Errorf("with the binary at mode 000: %+v\n%s", out, stderr)
	}
}

// TestExecRefusedIsNotADenial: a start refused because wsh's own binary
// cannot be executed (its mode changed by another session, say) is checked
// with a plain clone of the same namespaces: the host allows them, so it is
// a failure, never a denial that would run commands unsandboxed.
func TestExecRefusedIsNotADenial(t *testing.T) {
	noExec := filepath.Join(t.TempDir(), "wsh")
	if err := os.WriteFile(noExec, []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := exePath
	exePath = func() (initExe, error) { return initExe{path: noExec}, nil }
	defer func() { exePath = saved }()
	req, _ := jailRequest(t, "true")
	out, _ := runWithin(t, req)
	v := degrade.Classify(out)
	if out.StartErr == nil || !out.NamespacesAllowed || v.Kind != degrade.Failed {
		t.Errorf("exec of wsh refused: outcome %+v, verdict %v; want a checked failure, not a denial", out, v.Kind)
	}
	if !namespacesAllowed(false) || !namespacesAllowed(true) {
		t.Error("namespacesAllowed is false on a host where the jail works")
	}
}

// TestRunClosedStdin: a standard stream given as an *os.File that is
// already closed (the interpreter closes a pipe's end when its side of a
// pipeline returns) is /dev/null to the command, not a start that fails,
// and never whatever file took the closed number.
func TestRunClosedStdin(t *testing.T) {
	req, stderr := jailRequest(t, "sh", "-c", "cat; readlink /proc/self/fd/0 >&2")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	req.Stdin = r
	out, _ := runWithin(t, req)
	if out.StartErr != nil || out.Report != nil || out.Status != 0 {
		t.Fatalf("outcome %+v, want status 0\nstderr:\n%s", out, stderr)
	}
	if got := strings.TrimSpace(stderr.String()); got != "/dev/null" {
		t.Errorf("the command's stdin is %q, want /dev/null", got)
	}
}

// TestRunProtectionSent: the target starts only once the init has the
// protection that Request.Protection found; an error, or a cancellation
// while it was found, sends none, and the target never starts.
func TestRunProtectionSent(t *testing.T) {
	cases := []struct {
		name    string
		find    func(cancel func()) ([]byte, error)
		started bool
	}{
		// The control: the same target starts.
		{"found", func(func()) ([]byte, error) { return proto.EncodeProtection(nil, nil) }, true},
		{"an error", func(func()) ([]byte, error) { return nil, errors.New("cannot") }, false},
		{"cancelled meanwhile", func(cancel func()) ([]byte, error) {
			cancel()
			return proto.EncodeProtection(nil, nil)
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, stderr := jailRequest(t, "sh", "-c", "trap '' TERM; touch started; sleep 3")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req.Protection = func() ([]byte, error) { return c.find(cancel) }
			// As the shell's: a cancelled setup may finish before the kill.
			req.KillTimeout = 2 * time.Second
			out := Run(ctx, req)
			_, err := os.Lstat(filepath.Join(req.Spec.Dir, "started"))
			if started := err == nil; started != c.started {
				t.Errorf("started %v, want %v; outcome %+v\nstderr:\n%s", started, c.started, out, stderr)
			}
			// Cancelled, the init may be killed before it reports.
			if c.name == "an error" && (out.Report == nil || out.Report.Step != degrade.StepProtect) {
				t.Errorf("outcome %+v, want a report of the protect step", out)
			}
		})
	}
}
