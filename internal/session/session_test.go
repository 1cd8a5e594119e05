//go:build linux && cgo

package session

import (
	"strings"
	"testing"

	"wsh/degrade"
	"wsh/internal/protect"
	"wsh/internal/proto"
)

// A jail's record is stale when the hidden paths changed, and, on the
// full rung alone, when a protected path appeared that it does not
// protect; a lower rung's protected paths are watched per command.
func TestStale(t *testing.T) {
	git := proto.PathID{Path: "/p/.git", Dev: 1, Ino: 2}
	hooks := proto.PathID{Path: "/p/.git/hooks", Dev: 1, Ino: 3}
	made := &protect.Protection{Pins: []proto.PathID{git}}
	grown := &protect.Protection{Pins: []proto.PathID{git}, Paths: []proto.PathID{hooks}}
	for _, tc := range []struct {
		name  string
		rung  degrade.Rung
		print string
		prot  *protect.Protection
		want  string // a part of the reason; "" for none
	}{
		{"as made", degrade.RungFull, "h", made, ""},
		{"a protected path appeared", degrade.RungFull, "h", grown, "a protected path appeared since the session's jail was made (/p/.git/hooks)"},
		{"a hidden path changed", degrade.RungFull, "h2", made, "a hidden path changed"},
		{"landlock: a grant changed", degrade.RungLandlock, "h2", made, "a directory above a hidden path"},
		{"seccomp: protected paths are watched", degrade.RungSeccomp, "h", grown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sj := Record(tc.rung, "/p", "h", made)
			got := sj.Stale(tc.prot, tc.print)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("Stale = %q, want %q", got, tc.want)
			}
		})
	}
}

// Unprotected names a path the record does not protect, pins included.
func TestUnprotected(t *testing.T) {
	a := proto.PathID{Path: "/p/a", Dev: 1, Ino: 5}
	b := proto.PathID{Path: "/p/b", Dev: 1, Ino: 6}
	sj := Record(degrade.RungFull, "/p", "", &protect.Protection{Paths: []proto.PathID{a}})
	if p := sj.Unprotected(&protect.Protection{Paths: []proto.PathID{a}}); p != "" {
		t.Errorf("Unprotected of what it protects = %q, want none", p)
	}
	if p := sj.Unprotected(&protect.Protection{Pins: []proto.PathID{b}, Paths: []proto.PathID{a}}); p != "/p/b" {
		t.Errorf("Unprotected = %q, want /p/b", p)
	}
	// The same path made anew (another inode) is not the one protected.
	again := proto.PathID{Path: "/p/a", Dev: 1, Ino: 7}
	if p := sj.Unprotected(&protect.Protection{Paths: []proto.PathID{again}}); p != "/p/a" {
		t.Errorf("Unprotected of a path made anew = %q, want /p/a", p)
	}
}
