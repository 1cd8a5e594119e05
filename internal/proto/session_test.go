package proto

import (
	"reflect"
	"testing"
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
	for _, k := range []byte{MsgRun, MsgSignal, MsgStarted, MsgFailed, MsgExited} {
		m := SessionMsg{Kind: k, ID: 1 << 40, Step: StepChdir, Value: 15}
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

// TestSessionSpec: a session's spec has no target, and only the full rung
// has sessions.
func TestSessionSpec(t *testing.T) {
	s := Spec{Session: true, Dir: "/w"}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeSpec(b); err != nil || !got.Session {
		t.Errorf("a session's spec: %+v, %v", got, err)
	}
	s.Rung = RungLandlock
	b, _ = s.Encode()
	if _, err := decodeSpec(b); err == nil {
		t.Error("a session on the landlock rung was accepted")
	}
}
