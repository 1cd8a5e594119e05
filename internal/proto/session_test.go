package proto

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"wsh/degrade"
)

// TestSessionMessages: a Run and every other message survive the wire; a
// message of a kind wsh does not send, a short one, a Run without a path,
// argv or directory, or with bytes after it, is refused.
func TestSessionMessages(t *testing.T) {
	r := SessionRun{ID: 7, Umask: 0o077, Dir: "/w", Path: "/bin/sh", Args: []string{"sh", "-c", "echo"}, Env: []string{"A=1"}}
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSessionRun(b)
	if err != nil || !reflect.DeepEqual(*got, r) {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, r)
	}
	if _, err := DecodeSessionRun(append(b, 0)); err == nil {
		t.Error("a Run with a byte after it was accepted")
	}
	for _, bad := range []SessionRun{{ID: 1, Dir: "/w", Args: []string{"x"}}, {ID: 1, Dir: "/w", Path: "/x"}, {ID: 1, Path: "/x", Args: []string{"x"}}} {
		b, _ := bad.Encode()
		if _, err := DecodeSessionRun(b); err == nil {
			t.Errorf("an incomplete Run was accepted: %+v", bad)
		}
	}
	for _, k := range []byte{MsgRun, MsgSignal, MsgStarted, MsgFailed, MsgExited, MsgProtect, MsgProtected} {
		m := SessionMsg{Kind: k, ID: 1 << 40, Step: degrade.StepChdir, Value: 15}
		if got, err := DecodeSessionMsg(m.Encode()); err != nil || got != m {
			t.Errorf("round trip of %c: %+v, %v", k, got, err)
		}
	}
	if _, err := DecodeSessionMsg(SessionMsg{Kind: 'Z'}.Encode()); err == nil {
		t.Error("a message of an unknown kind was accepted")
	}
	if _, err := DecodeSessionMsg([]byte{MsgSignal, 1}); err == nil {
		t.Error("a short message was accepted")
	}
}

// TestSessionSpec: a session's spec has no target, on every rung; a lower
// rung's session filter has SessionForkGroup in SessionGroup's place.
func TestSessionSpec(t *testing.T) {
	for _, r := range []degrade.Rung{degrade.RungFull, degrade.RungLandlock, degrade.RungSeccomp} {
		s := Spec{Session: true, Dir: "/w", Rung: r}
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got, err := decodeSpec(b); err != nil || !got.Session || got.Rung != r {
			t.Errorf("a session's spec on %s: %+v, %v", r, got, err)
		}
		s.Path, s.Args = "/bin/true", []string{"true"}
		b, _ = s.Encode()
		if _, err := ReadSpec(bytes.NewReader(b)); err == nil {
			t.Errorf("a session's spec with a target on %s was accepted", r)
		}
	}
	for _, c := range []struct {
		s          Spec
		skip, keep string
	}{
		{Spec{Rung: degrade.RungLandlock}, SessionForkGroup, SessionGroup},
		{Spec{Rung: degrade.RungSeccomp, Session: true}, SessionGroup, SessionForkGroup},
		{Spec{Rung: degrade.RungLandlock, Session: true}, SessionGroup, SessionForkGroup},
	} {
		skip := c.s.SkipGroups()
		if !slices.Contains(skip, c.skip) || slices.Contains(skip, c.keep) {
			t.Errorf("%+v skips %v: want %s skipped and %s kept", c.s, skip, c.skip, c.keep)
		}
	}
	if skip := (&Spec{Rung: degrade.RungFull, Session: true}).SkipGroups(); !slices.Contains(skip, SessionGroup) || !slices.Contains(skip, SessionForkGroup) {
		t.Errorf("the full rung's session keeps a lower rung's group: skips %v", skip)
	}
}
