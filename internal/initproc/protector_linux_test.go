package initproc

import (
	"testing"

	"wsh/internal/proto"
)

// TestProtectorInWritable: the protector binds only beneath a writable
// path of the jail, a path written clean (no "..", ".", or empty
// component that could lead elsewhere), never a writable path itself.
func TestProtectorInWritable(t *testing.T) {
	p := &protector{st: &setupState{spec: &proto.Spec{Writable: []proto.PathID{{Path: "/home/u/proj"}, {Path: "/tmp"}}}}}
	for path, want := range map[string]bool{
		"/home/u/proj/.git/hooks":         true,
		"/home/u/proj/sub/.git/config":    true,
		"/tmp/.codex":                     true,
		"/home/u/proj":                    false,
		"/home/u/projx/.git/hooks":        false,
		"/home/u/.bashrc":                 false,
		"/home/u/proj/../.bashrc":         false,
		"/home/u/proj/./.git/hooks":       false,
		"/home/u/proj//.git/hooks":        false,
		"home/u/proj/.git/hooks":          false,
		"/etc/passwd":                     false,
		"/tmp/../etc/passwd":              false,
		"/home/u/proj/.git/hooks/":        false,
		"/home/u/proj/.git/hooks/pre-com": true,
	} {
		if got := p.inWritable(path); got != want {
			t.Errorf("inWritable(%q) = %v, want %v", path, got, want)
		}
	}
}
