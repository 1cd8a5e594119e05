package proto

import (
	"syscall"
	"testing"
	"wsh/degrade"
)

// TestReportRoundTrip: every step's report, with any errno, decodes to
// itself.
func TestReportRoundTrip(t *testing.T) {
	for s := degrade.StepNone + 1; s.Reported(); s++ {
		for _, e := range []syscall.Errno{syscall.EPERM, syscall.EACCES, syscall.ENOSPC, 0xfffffff} {
			r := degrade.Report{Step: s, Errno: e}
			b := EncodeReport(r)
			got, ok := DecodeReport(b[:])
			if !ok || got != r {
				t.Errorf("DecodeReport(Encode(%+v)) = %+v, %v", r, got, ok)
			}
		}
	}
}

// TestDecodeReportIgnoresForeignBytes: bytes that are not exactly one whole
// valid report are not a report.
func TestDecodeReportIgnoresForeignBytes(t *testing.T) {
	valid := EncodeReport(degrade.Report{Step: degrade.StepMountPrivate, Errno: syscall.EPERM})
	with := func(i int, v byte) []byte {
		b := valid
		b[i] = v
		return b[:]
	}
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"one byte", valid[:1]},
		{"short", valid[:ReportSize-1]},
		{"long", append(valid[:], 0)},
		{"two reports", append(valid[:], valid[:]...)},
		{"bad first magic byte", with(0, 'x')},
		{"bad second magic byte", with(1, 0)},
		{"nonzero pad", with(3, 1)},
		{"step none", with(2, byte(degrade.StepNone))},
		{"unknown step", with(2, byte(degrade.StepListener+1))},
		{"step 255", with(2, 255)},
		{"zero errno", append(valid[:4:4], 0, 0, 0, 0)},
		{"zeros", make([]byte, ReportSize)},
		{"text", []byte("mode 2!\n")},
	}
	for _, c := range cases {
		if r, ok := DecodeReport(c.b); ok {
			t.Errorf("%s: DecodeReport(%q) = %+v, true; want not a report", c.name, c.b, r)
		}
	}
	if _, ok := DecodeReport(valid[:]); !ok {
		t.Errorf("the valid report the cases derive from does not decode")
	}
}
