package proto

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

func fullSpec() *Spec {
	return &Spec{
		Writable:     []PathID{{"/tmp", 1, 2}, {"/work/dir with space", 3, 4}},
		Hidden:       []PathID{{"/home/u/.ssh", 5, 6}, {"/nonexistent", 0, 0}},
		ShmDir:       PathID{"/dev/shm/wsh-1", 7, 8},
		Home:         PathID{"/home/u", 9, 10},
		HomeMounts:   []string{"/home/u/mnt", "/home/u/data disk"},
		Pins:         []PathID{{"/work/dir with space/.git", 11, 12}},
		Protect:      []PathID{{"/work/dir with space/.git/config", 13, 14}},
		Filter:       bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 40),
		AllowUnix:    true,
		HostNetwork:  true,
		ProtectLater: true,
		Dir:          "/work/dir with space",
		Path:         "/usr/bin/printf",
		Args:         []string{"printf", "%s\n", "", "ünïcode", strings.Repeat("x", 1000)},
		Env:          []string{"PATH=/bin", "LD_PRELOAD=/x.so", "EMPTY="},
	}
}

// TestSpecRoundTrip: what the parent encodes, the init reads back exactly.
func TestSpecRoundTrip(t *testing.T) {
	for _, s := range []*Spec{fullSpec(), {Dir: "/", Path: "/bin/true", Args: []string{"true"}}} {
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadSpec(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("ReadSpec: %v", err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("read back %+v\nwant %+v", got, s)
		}
	}
}

// TestSpecRefusesMalformed: every truncation, a trailing byte, an unknown
// flag, another version and a count the input cannot hold are refused.
func TestSpecRefusesMalformed(t *testing.T) {
	b, err := fullSpec().Encode()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) {
		if _, err := ReadSpec(bytes.NewReader(b[:n])); err == nil {
			t.Fatalf("a spec cut to %d of %d bytes was accepted", n, len(b))
		}
	}
	bad := map[string][]byte{
		"a trailing byte": append(append([]byte(nil), b...), 0),
		"an unknown flag": func() []byte { c := bytes.Clone(b); c[len(specMagic)] |= 8; return c }(),
		"another version": func() []byte { c := bytes.Clone(b); c[len(specMagic)-1] = 4; return c }(),
		"a huge count": func() []byte {
			c := []byte(specMagic + "\x00")
			return binary.LittleEndian.AppendUint32(c, 1<<31)
		}(),
		"json": []byte(`{"d":"/","p":"/bin/true","a":["true"]}`),
	}
	for name, c := range bad {
		if _, err := ReadSpec(bytes.NewReader(c)); err == nil {
			t.Errorf("%s was accepted", name)
		}
	}
}

// TestProtectionRoundTrip: what the parent sends on ProtectFD the init
// reads back; word that there is none, or nothing at all (the parent
// died), is an abort; anything else is refused.
func TestProtectionRoundTrip(t *testing.T) {
	pins := []PathID{{"/w/a", 1, 2}}
	paths := []PathID{{"/w/a/.git/config", 3, 4}, {"/w/a/.git/hooks", 5, 6}}
	b, err := EncodeProtection(pins, paths)
	if err != nil {
		t.Fatal(err)
	}
	gotPins, gotPaths, aborted, err := ReadProtection(bytes.NewReader(b))
	if err != nil || aborted || !reflect.DeepEqual(gotPins, pins) || !reflect.DeepEqual(gotPaths, paths) {
		t.Errorf("read back %v %v %v %v", gotPins, gotPaths, aborted, err)
	}
	for name, in := range map[string][]byte{"abort": AbortProtection(), "nothing": nil} {
		if _, _, aborted, err := ReadProtection(bytes.NewReader(in)); !aborted || err != nil {
			t.Errorf("%s: aborted %v, %v", name, aborted, err)
		}
	}
	for n := 1; n < len(b); n++ {
		if _, _, aborted, err := ReadProtection(bytes.NewReader(b[:n])); err == nil || aborted {
			t.Fatalf("a protection cut to %d of %d bytes was accepted (aborted %v)", n, len(b), aborted)
		}
	}
	if _, _, _, err := ReadProtection(bytes.NewReader(append(bytes.Clone(b), 0))); err == nil {
		t.Error("a trailing byte was accepted")
	}
}

// FuzzSpec: decoding never panics, and what decodes encodes back to the
// same bytes.
func FuzzSpec(f *testing.F) {
	b, _ := fullSpec().Encode()
	f.Add(b)
	f.Add([]byte(specMagic))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := decodeSpec(in)
		if err != nil {
			return
		}
		out, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, in) {
			t.Errorf("decode then encode changed the bytes:\n%q\n%q", in, out)
		}
	})
}
