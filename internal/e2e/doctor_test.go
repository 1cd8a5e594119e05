//go:build linux && cgo

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// doctorVerdict is the part of `wsh doctor --json` these tests compare.
type doctorVerdict struct {
	Verdict string `json:"verdict"`
	Status  int    `json:"status"`
	Reason  string `json:"reason"`
	Denial  *struct {
		Mode  int    `json:"mode"`
		Step  string `json:"step"`
		Errno string `json:"errno"`
	} `json:"denial"`
}

// runDoctor runs `wsh doctor --json` as u in dir, on a host made hostile in
// mode ("" for this healthy host).
func runDoctor(t *testing.T, u user, dir string, env []string, mode string) doctorVerdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := wshCmd(ctx, u, dir, env, "doctor", "--json")
	if mode != "" {
		h := hostileBin(t)
		cmd.Path = h
		cmd.Args = append([]string{h, mode, "--", wshBin}, cmd.Args[1:]...)
	}
	out, _ := cmd.Output()
	var v doctorVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("wsh doctor --json in mode %q: %v\n%s", mode, err, out)
	}
	if cmd.ProcessState.ExitCode() != v.Status {
		t.Errorf("doctor exits %d but says status %d", cmd.ProcessState.ExitCode(), v.Status)
	}
	return v
}

// launch runs one appending command through `wsh -c` in the same conditions
// and returns its result and the lines it appended.
func launch(t *testing.T, u user, dir string, env []string, mode string) (result, []string) {
	t.Helper()
	os.Remove(filepath.Join(dir, "f"))
	const script = `sh -c 'echo ran >> f'`
	var r result
	if mode == "" {
		r = runWsh(t, u, dir, env, script)
	} else {
		r = runHostile(t, u, dir, env, mode, script)
	}
	return r, appended(t, dir)
}

// TestDoctorAgreesWithLaunch: under this healthy host and each mode of the
// hostile harness, with each setting, doctor's verdict is what `wsh -c`
// then does.
func TestDoctorAgreesWithLaunch(t *testing.T) {
	cases := []struct {
		mode    string
		env     []string
		verdict string
		status  int
	}{
		{"", nil, "confined", 0},
		{"", []string{"WSH_NO_SANDBOX=1"}, "opted-out-jail-works", 4},
		{cloneEPERM.arg, nil, "would-degrade", 1},
		{cloneEACCES.arg, nil, "would-degrade", 1},
		{mountEPERM.arg, nil, "would-degrade", 1},
		{mountEACCES.arg, nil, "would-degrade", 1},
		{usernsLimit.arg, nil, "would-fail", 3},
		{cloneEPERM.arg, []string{"WSH_REQUIRE_SANDBOX=1"}, "required-unavailable", 3},
		{mountEACCES.arg, []string{"WSH_REQUIRE_SANDBOX=1"}, "required-unavailable", 3},
		{mountEPERM.arg, []string{"WSH_NO_SANDBOX=1"}, "opted-out", 5},
	}
	for _, u := range users {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/mode%s/%s", u.name, c.mode, strings.Join(c.env, ",")), func(t *testing.T) {
				dir := workDir(t, u)
				v := runDoctor(t, u, dir, c.env, c.mode)
				if v.Verdict != c.verdict || v.Status != c.status {
					t.Fatalf("doctor says %s (%d), want %s (%d): %s", v.Verdict, v.Status, c.verdict, c.status, v.Reason)
				}
				r, lines := launch(t, u, dir, c.env, c.mode)
				agree(t, v, r, lines)
			})
		}
	}
}

// agree checks that what wsh -c did is what the verdict promised.
func agree(t *testing.T, v doctorVerdict, r result, lines []string) {
	t.Helper()
	warned := strings.Count(r.stderr, "wsh: warning:")
	ran := len(lines) == 1
	switch v.Verdict {
	case "confined", "opted-out-jail-works", "opted-out":
		if r.status != 0 || !ran || warned != 0 {
			t.Errorf("%s, but wsh -c: status %d, ran %v, %d warnings\n%s", v.Verdict, r.status, ran, warned, r.stderr)
		}
	case "would-degrade":
		want := fmt.Sprintf("jail: %s:", v.Denial.Step)
		if r.status != 0 || !ran || warned != 1 || !strings.Contains(r.stderr, want) ||
			!strings.Contains(r.stderr, fmt.Sprintf("(mode %d", v.Denial.Mode)) {
			t.Errorf("doctor: would degrade at %+v; wsh -c: status %d, ran %v, %d warnings\n%s", *v.Denial, r.status, ran, warned, r.stderr)
		}
	case "would-fail", "required-unavailable":
		if r.status != 126 || len(lines) != 0 || warned != 0 {
			t.Errorf("%s, but wsh -c: status %d, lines %q, %d warnings\n%s", v.Verdict, r.status, lines, warned, r.stderr)
		}
	default:
		t.Fatalf("unknown verdict %q", v.Verdict)
	}
}

// TestVersionSaysTheRung: wsh --version says the rung this host gives,
// from the same probe jail as doctor: the full jail here, the landlock
// rung where clone is refused (mode 1), the seccomp rung where Landlock
// is absent too (mode 6); as root and as 65534.
func TestVersionSaysTheRung(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			dir := workDir(t, u)
			for _, c := range []struct{ mode, rung string }{{"", "full"}, {cloneEPERM.arg, "landlock"}, {"6", "seccomp"}} {
				cmd := wshCmd(context.Background(), u, dir, nil, "--version")
				if c.mode != "" {
					h := hostileBin(t)
					cmd.Args = append([]string{h, c.mode, "--", wshBin}, cmd.Args[1:]...)
					cmd.Path = h
				}
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("mode %q: wsh --version: %v\n%s", c.mode, err, out)
				}
				if !regexp.MustCompile(`(?m)^rung: ` + c.rung + ` \(`).Match(out) {
					t.Errorf("mode %q: wsh --version does not say the %s rung:\n%s", c.mode, c.rung, out)
				}
			}
		})
	}
}
