package degrade

import (
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func startErr(errno syscall.Errno) error {
	return &os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: errno}
}

func TestClassify(t *testing.T) {
	rep := func(step Step, errno syscall.Errno) *Report {
		return &Report{Step: step, Errno: errno}
	}
	tests := []struct {
		name string
		in   Facts
		want Verdict
	}{
		{"mode 1 EPERM", Facts{StartErr: startErr(syscall.EPERM)}, Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM}},
		{"mode 1 EACCES", Facts{StartErr: startErr(syscall.EACCES)}, Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EACCES}},
		{"lower rung, exec refused", Facts{Rung: RungLandlock, StartErr: startErr(syscall.EACCES), StartStep: StartExec}, Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.EACCES, Note: "no namespaces were asked for; the exec of wsh's own binary was refused; at execve"}},
		{"lower rung, setsid refused", Facts{Rung: RungSeccomp, StartErr: startErr(syscall.EPERM), StartStep: StartSetsid, Filtered: true}, Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM, Note: "at setsid", Filtered: true}},
		{"mode 1 EPERM under a filter", Facts{StartErr: startErr(syscall.EPERM), Filtered: true}, Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM, Filtered: true}},
		{"start ENOSPC", Facts{StartErr: startErr(syscall.ENOSPC)}, Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.ENOSPC}},
		{"start EINVAL", Facts{StartErr: startErr(syscall.EINVAL)}, Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.EINVAL}},
		{"start ENOENT", Facts{StartErr: startErr(syscall.ENOENT)}, Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.ENOENT}},
		{"mode 1 at the uid map", Facts{StartErr: startErr(syscall.EPERM), StartStep: StartUIDMap}, Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM, Note: "at write /proc/self/uid_map"}},
		{"start at execve, checked", Facts{StartErr: startErr(syscall.EACCES), StartStep: StartExec, NamespacesAllowed: true}, Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.EACCES, Note: "the namespaces were allowed; the exec of wsh's own binary was refused; at execve"}},
		{"mode 2 EPERM", Facts{Report: rep(StepMountPrivate, syscall.EPERM), Status: 125}, Verdict{Kind: Denied, Mode: 2, Step: StepMountPrivate, Errno: syscall.EPERM}},
		{"mode 2 EACCES", Facts{Report: rep(StepProc, syscall.EACCES), Status: 125}, Verdict{Kind: Denied, Mode: 2, Step: StepProc, Errno: syscall.EACCES}},
		{"report EROFS", Facts{Report: rep(StepWritable, syscall.EROFS), Status: 125}, Verdict{Kind: Failed, Mode: 2, Step: StepWritable, Errno: syscall.EROFS}},
		{"report ENOENT", Facts{Report: rep(StepDetach, syscall.ENOENT)}, Verdict{Kind: Failed, Mode: 2, Step: StepDetach, Errno: syscall.ENOENT}},
		{"path step EACCES is a file's permission", Facts{Report: rep(StepChdir, syscall.EACCES)}, Verdict{Kind: Failed, Mode: 2, Step: StepChdir, Errno: syscall.EACCES, Note: "a path of the jail is not accessible"}},
		{"path step EPERM is a denial", Facts{Report: rep(StepDetach, syscall.EPERM)}, Verdict{Kind: Denied, Mode: 2, Step: StepDetach, Errno: syscall.EPERM}},
		{"the home's EPERM is no denial", Facts{Report: rep(StepHome, syscall.EPERM)}, Verdict{Kind: Failed, Mode: 2, Step: StepHome, Errno: syscall.EPERM}},
		{"the home's EACCES is no denial", Facts{Report: rep(StepHome, syscall.EACCES)}, Verdict{Kind: Failed, Mode: 2, Step: StepHome, Errno: syscall.EACCES}},
		{"exec EACCES is not a denial", Facts{Report: rep(StepExec, syscall.EACCES)}, Verdict{Kind: NotExecutable, Step: StepExec, Errno: syscall.EACCES}},
		{"exec ENOEXEC", Facts{Report: rep(StepExec, syscall.ENOEXEC)}, Verdict{Kind: NotExecutable, Step: StepExec, Errno: syscall.ENOEXEC}},
		{"a stream the jail cannot show", Facts{Report: rep(StepStdio, syscall.EXDEV)}, Verdict{Kind: Failed, Mode: 2, Step: StepStdio, Errno: syscall.EXDEV, Note: "a standard stream of the command is a file or device the jail cannot show; give it through a pipe"}},
		{"landlock's EPERM is no denial", Facts{Report: rep(StepLandlock, syscall.EPERM)}, Verdict{Kind: Failed, Mode: 2, Step: StepLandlock, Errno: syscall.EPERM}},
		{"protect EACCES is a file's permission", Facts{Report: rep(StepProtect, syscall.EACCES)}, Verdict{Kind: Failed, Mode: 2, Step: StepProtect, Errno: syscall.EACCES, Note: "a path of the jail is not accessible"}},
		{"no report, status 0", Facts{Status: 0}, Verdict{Kind: Ran}},
		{"no report, reserved status", Facts{Status: 125}, Verdict{Kind: Ran, Status: 125}},
		{"no report, status 1", Facts{Status: 1}, Verdict{Kind: Ran, Status: 1}},
		{"no report, killed", Facts{Status: 137}, Verdict{Kind: Ran, Status: 137}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(tt.in)
			got.Err = nil
			if got != tt.want {
				t.Errorf("Classify(%+v)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	tests := []struct {
		in   Facts
		want []string
	}{
		{Facts{StartErr: startErr(syscall.ENOSPC)}, []string{"jail: clone: no space left on device", "user.max_user_namespaces", "wsh doctor"}},
		{Facts{StartErr: startErr(syscall.EINVAL)}, []string{"jail: clone: invalid argument", "no user namespaces", "wsh doctor"}},
		{Facts{Report: &Report{Step: StepMountPrivate, Errno: syscall.EPERM}}, []string{"jail: mount-private: operation not permitted", "mode 2"}},
		{Facts{StartErr: startErr(syscall.EACCES)}, []string{"jail: clone: permission denied", "mode 1"}},
		{Facts{Report: &Report{Step: StepWritable, Errno: syscall.EROFS}}, []string{"jail: writable: read-only file system", "wsh doctor"}},
	}
	for _, tt := range tests {
		msg := Classify(tt.in).Message()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("message %q lacks %q", msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("message %q is more than one line", msg)
		}
	}
}

func TestWarning(t *testing.T) {
	v := Classify(Facts{Report: &Report{Step: StepMountPrivate, Errno: syscall.EACCES}})
	for r, want := range map[Rung][]string{
		RungLandlock: {"landlock rung", "Landlock", "host's processes", "protected paths", "mode, owner"},
		RungSeccomp:  {"seccomp rung", "neither Landlock", "read the hidden paths"},
		RungNone:     {"unsandboxed"},
	} {
		w := Warning(v, r, 7)
		for _, s := range append(want, "mode 2", "mount-private", "permission denied", "AppArmor", "wsh doctor", "WSH_REQUIRE_SANDBOX=1") {
			if !strings.Contains(w, s) {
				t.Errorf("%s: warning %q lacks %q", r, w, s)
			}
		}
		if strings.Contains(w, "\n") || strings.Contains(w, "WSH_NO_SANDBOX") {
			t.Errorf("%s: warning %q is more than one line, or offers the opt-out", r, w)
		}
	}
	// An ABI before 6 has no signal scope; one before 3 no truncate.
	if w := Warning(v, RungLandlock, 5); !strings.Contains(w, "signal this user's other processes (Landlock ABI 5") {
		t.Errorf("ABI 5: %q", w)
	}
	if w := Warning(v, RungLandlock, 2); !strings.Contains(w, "truncate any file") {
		t.Errorf("ABI 2: %q", w)
	}
	if w := Warning(v, RungLandlock, 7); strings.Contains(w, "signal this user's") || strings.Contains(w, "truncate any") {
		t.Errorf("ABI 7 says it lacks what it has: %q", w)
	}
}

// TestWarningCause: the likely cause of a refused clone names the
// filter wsh itself runs under when there is one (wsh in a wsh jail).
func TestWarningCause(t *testing.T) {
	plain := Warning(Classify(Facts{StartErr: startErr(syscall.EPERM)}), RungLandlock, 7)
	filtered := Warning(Classify(Facts{StartErr: startErr(syscall.EPERM), Filtered: true}), RungLandlock, 7)
	if !strings.Contains(plain, "a seccomp profile or policy refuses user namespaces") || strings.Contains(plain, "another wsh's jail") {
		t.Errorf("without a filter on wsh: %q", plain)
	}
	if !strings.Contains(filtered, "wsh itself runs under a seccomp filter") || !strings.Contains(filtered, "another wsh's jail") {
		t.Errorf("under a filter: %q", filtered)
	}
	if none := Warning(Classify(Facts{StartErr: startErr(syscall.EPERM), Filtered: true}), RungNone, 7); !strings.Contains(none, "without a jail of wsh's own") ||
		strings.Contains(none, "unsandboxed") {
		t.Errorf("on rung none under a filter: %q", none)
	}
	refused := Classify(Facts{StartErr: startErr(syscall.EPERM), Filtered: true})
	refused.Kind = Refused
	if m := refused.Message(); !strings.Contains(m, "wsh itself runs under a seccomp filter") {
		t.Errorf("refused under a filter (WSH_REQUIRE_SANDBOX): %q", m)
	}
}

// TestStateRecordsOnce races many denials; exactly one is first.
func TestStateRecordsOnce(t *testing.T) {
	var s State
	if _, ok := s.Degraded(); ok {
		t.Fatal("a new State is degraded")
	}
	var wg sync.WaitGroup
	firsts := make(chan bool, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s.Settle(Verdict{Kind: Denied, Mode: 2, Step: StepProc, Errno: syscall.EPERM})
			firsts <- s.Warn()
		}(i)
	}
	wg.Wait()
	close(firsts)
	n := 0
	for f := range firsts {
		if f {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d first records, want 1", n)
	}
	if v, ok := s.Degraded(); !ok || v.Kind != Denied {
		t.Errorf("Degraded() = %+v, %v", v, ok)
	}
}

// TestSettleAfterAJailWorked: once a jail was made in a Runner, a denial is
// a command's doing, not the host's: it fails loudly and never degrades.
func TestSettleAfterAJailWorked(t *testing.T) {
	var s State
	if v := s.Settle(Verdict{Kind: Ran}); v.Kind != Ran {
		t.Fatalf("Settle(Ran) = %+v", v)
	}
	v := s.Settle(Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EACCES})
	if warn := s.Warn(); v.Kind != Failed || warn || !strings.Contains(v.Message(), "worked earlier") {
		t.Errorf("a denial after a jail worked: %+v, warn %v, %q", v, warn, v.Message())
	}
	if _, degraded := s.Degraded(); degraded {
		t.Error("degraded after a jail worked")
	}
}

// TestSettleSticky: the first denial degrades and warns; later ones do not
// warn again.
func TestSettleSticky(t *testing.T) {
	var s State
	d := Verdict{Kind: Denied, Mode: 2, Step: StepMountPrivate, Errno: syscall.EPERM}
	if v := s.Settle(d); v.Kind != Denied || !s.Warn() {
		t.Fatalf("first denial: %+v, no warning", v)
	}
	if v := s.Settle(d); v.Kind != Denied || s.Warn() {
		t.Errorf("second denial: %+v, or a second warning", v)
	}
}

// TestClassifyCheckedStart: a mode-1 EACCES the parent checked (the host
// allowed the namespaces) is a failure.
func TestClassifyCheckedStart(t *testing.T) {
	v := Classify(Facts{StartErr: startErr(syscall.EACCES), NamespacesAllowed: true})
	if v.Kind != Failed || v.Mode != 1 || !strings.Contains(v.Message(), "the namespaces were allowed") {
		t.Errorf("checked EACCES at start: %+v, %q", v, v.Message())
	}
}

// TestSettleRequireSandbox: with RequireSandbox a denial is Refused, never
// degrades and never warns; a failure is remembered as the last one.
func TestSettleRequireSandbox(t *testing.T) {
	var s State
	s.SetFloor(RungFull)
	d := Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM}
	if v := s.Settle(d); v.Kind != Refused || s.Warn() || !strings.Contains(v.Message(), "(mode 1: the host refuses the jail)") {
		t.Errorf("a denial under RequireSandbox: %+v, %q", v, v.Message())
	}
	if _, degraded := s.Degraded(); degraded {
		t.Error("degraded under RequireSandbox")
	}
	if v, ok := s.Refused(); !ok || v.Errno != syscall.EPERM {
		t.Errorf("Refused() = %+v, %v", v, ok)
	}
	f := Verdict{Kind: Failed, Mode: 1, Step: StepClone, Errno: syscall.ENOSPC}
	s.Settle(f)
	if v, ok := s.Failed(); !ok || v.Errno != syscall.ENOSPC {
		t.Errorf("Failed() = %+v, %v", v, ok)
	}
	// A jail made later: the refusal is over.
	s.Settle(Verdict{Kind: Ran})
	if _, ok := s.Refused(); ok {
		t.Error("still refusing after a jail was made")
	}
}

// TestFloor: a floor below the full jail lets a denial degrade (the Runner
// steps down the ladder) and accepts the rungs at or above it only; no
// floor accepts every rung, none included.
func TestFloor(t *testing.T) {
	d := Verdict{Kind: Denied, Mode: 1, Step: StepClone, Errno: syscall.EPERM}
	for _, c := range []struct {
		floor   Rung
		floored bool
		accepts []Rung
		kind    Kind
	}{
		{0, false, []Rung{RungFull, RungLandlock, RungSeccomp, RungNone}, Denied},
		{RungFull, true, []Rung{RungFull}, Refused},
		{RungLandlock, true, []Rung{RungFull, RungLandlock}, Denied},
		{RungSeccomp, true, []Rung{RungFull, RungLandlock, RungSeccomp}, Denied},
	} {
		var s State
		if c.floored {
			s.SetFloor(c.floor)
		}
		if v := s.Settle(d); v.Kind != c.kind {
			t.Errorf("floor %v (%v): a denial is %v, want %v", c.floor, c.floored, v.Kind, c.kind)
		}
		for r := RungFull; r <= RungNone; r++ {
			if got, want := s.Accepts(r), slices.Contains(c.accepts, r); got != want {
				t.Errorf("floor %v (%v): Accepts(%v) = %v, want %v", c.floor, c.floored, r, got, want)
			}
		}
	}
}
