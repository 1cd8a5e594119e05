package verdict

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func startErr(errno syscall.Errno) error {
	return &os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: errno}
}

func TestClassify(t *testing.T) {
	rep := func(step string, errno syscall.Errno) *Report { return &Report{Step: step, Errno: errno} }
	tests := []struct {
		name string
		in   Outcome
		want Verdict
	}{
		{"mode 1 EPERM", Outcome{StartErr: startErr(syscall.EPERM)}, Verdict{Kind: Denied, Mode: 1, Step: "clone", Errno: syscall.EPERM}},
		{"mode 1 EACCES", Outcome{StartErr: startErr(syscall.EACCES)}, Verdict{Kind: Denied, Mode: 1, Step: "clone", Errno: syscall.EACCES}},
		{"start ENOSPC", Outcome{StartErr: startErr(syscall.ENOSPC)}, Verdict{Kind: Failed, Mode: 1, Step: "clone", Errno: syscall.ENOSPC}},
		{"start EINVAL", Outcome{StartErr: startErr(syscall.EINVAL)}, Verdict{Kind: Failed, Mode: 1, Step: "clone", Errno: syscall.EINVAL}},
		{"start ENOENT", Outcome{StartErr: startErr(syscall.ENOENT)}, Verdict{Kind: Failed, Mode: 1, Step: "clone", Errno: syscall.ENOENT}},
		{"mode 1 at the uid map", Outcome{StartErr: startErr(syscall.EPERM), StartStep: "write /proc/self/uid_map"}, Verdict{Kind: Denied, Mode: 1, Step: "clone", Errno: syscall.EPERM, Note: "at write /proc/self/uid_map"}},
		{"start at execve, checked", Outcome{StartErr: startErr(syscall.EACCES), StartStep: "execve", NotHost: true, Note: "the namespaces were allowed"}, Verdict{Kind: Failed, Mode: 1, Step: "clone", Errno: syscall.EACCES, Note: "the namespaces were allowed; at execve"}},
		{"mode 2 EPERM", Outcome{Report: rep("mount-private", syscall.EPERM), Status: 125}, Verdict{Kind: Denied, Mode: 2, Step: "mount-private", Errno: syscall.EPERM}},
		{"mode 2 EACCES", Outcome{Report: rep("proc", syscall.EACCES), Status: 125}, Verdict{Kind: Denied, Mode: 2, Step: "proc", Errno: syscall.EACCES}},
		{"report EROFS", Outcome{Report: rep("writable", syscall.EROFS), Status: 125}, Verdict{Kind: Failed, Mode: 2, Step: "writable", Errno: syscall.EROFS}},
		{"report ENOENT", Outcome{Report: rep("detach", syscall.ENOENT)}, Verdict{Kind: Failed, Mode: 2, Step: "detach", Errno: syscall.ENOENT}},
		{"path step EACCES is a file's permission", Outcome{Report: rep("chdir", syscall.EACCES), PathStep: true}, Verdict{Kind: Failed, Mode: 2, Step: "chdir", Errno: syscall.EACCES, Note: "a path of the jail is not accessible"}},
		{"path step EPERM is a denial", Outcome{Report: rep("detach", syscall.EPERM), PathStep: true}, Verdict{Kind: Denied, Mode: 2, Step: "detach", Errno: syscall.EPERM}},
		{"the home's EPERM is no denial", Outcome{Report: rep("home", syscall.EPERM), PathStep: true, NeverDenial: true}, Verdict{Kind: Failed, Mode: 2, Step: "home", Errno: syscall.EPERM}},
		{"the home's EACCES is no denial", Outcome{Report: rep("home", syscall.EACCES), PathStep: true, NeverDenial: true}, Verdict{Kind: Failed, Mode: 2, Step: "home", Errno: syscall.EACCES}},
		{"exec EACCES is not a denial", Outcome{Report: rep("exec", syscall.EACCES), ExecStep: "exec"}, Verdict{Kind: NotExecutable, Step: "exec", Errno: syscall.EACCES}},
		{"exec ENOEXEC", Outcome{Report: rep("exec", syscall.ENOEXEC), ExecStep: "exec"}, Verdict{Kind: NotExecutable, Step: "exec", Errno: syscall.ENOEXEC}},
		{"no report, status 0", Outcome{Status: 0}, Verdict{Kind: Ran}},
		{"no report, reserved status", Outcome{Status: 125}, Verdict{Kind: Ran, Status: 125}},
		{"no report, status 1", Outcome{Status: 1}, Verdict{Kind: Ran, Status: 1}},
		{"no report, killed", Outcome{Status: 137}, Verdict{Kind: Ran, Status: 137}},
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
		in   Outcome
		want []string
	}{
		{Outcome{StartErr: startErr(syscall.ENOSPC)}, []string{"jail: clone: no space left on device", "user.max_user_namespaces", "wsh doctor"}},
		{Outcome{StartErr: startErr(syscall.EINVAL)}, []string{"jail: clone: invalid argument", "no user namespaces", "wsh doctor"}},
		{Outcome{Report: &Report{"mount-private", syscall.EPERM}}, []string{"jail: mount-private: operation not permitted", "mode 2"}},
		{Outcome{StartErr: startErr(syscall.EACCES)}, []string{"jail: clone: permission denied", "mode 1"}},
		{Outcome{Report: &Report{"writable", syscall.EROFS}}, []string{"jail: writable: read-only file system", "wsh doctor"}},
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
	w := Warning(Classify(Outcome{Report: &Report{"mount-private", syscall.EACCES}}))
	for _, s := range []string{"mode 2", "mount-private", "permission denied", "WSH_NO_SANDBOX=1", "WSH_REQUIRE_SANDBOX=1"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
	if strings.Contains(w, "\n") {
		t.Errorf("warning %q is more than one line", w)
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
			s.Settle(Verdict{Kind: Denied, Mode: 2, Step: "proc", Errno: syscall.EPERM})
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
	v := s.Settle(Verdict{Kind: Denied, Mode: 1, Step: "clone", Errno: syscall.EACCES})
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
	d := Verdict{Kind: Denied, Mode: 2, Step: "mount-private", Errno: syscall.EPERM}
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
	v := Classify(Outcome{StartErr: startErr(syscall.EACCES), NotHost: true, Note: "checked"})
	if v.Kind != Failed || v.Mode != 1 || !strings.Contains(v.Message(), "checked") {
		t.Errorf("checked EACCES at start: %+v, %q", v, v.Message())
	}
}
