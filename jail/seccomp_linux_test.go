//go:build cgo

package jail

import (
	"slices"
	"testing"
)

// TestPolicyGroupNames checks that every group of the policy has a name of
// its own, which is what a mutation test passes to BuildFilter.
func TestPolicyGroupNames(t *testing.T) {
	var seen []string
	for _, g := range Policy {
		if g.Name == "" || slices.Contains(seen, g.Name) {
			t.Errorf("group %q: empty or named twice", g.Name)
		}
		seen = append(seen, g.Name)
		if len(g.Calls) == 0 {
			t.Errorf("group %s lists no calls", g.Name)
		}
	}
}

// TestPolicyBuildFilterSkips builds the whole filter and the filter without
// each group, and refuses a group that does not exist.
func TestPolicyBuildFilterSkips(t *testing.T) {
	for _, skip := range append([]string{""}, names()...) {
		var args []string
		if skip != "" {
			args = []string{skip}
		}
		f, err := BuildFilter(args...)
		if err != nil {
			t.Fatalf("BuildFilter(%q): %v", args, err)
		}
		f.Release()
	}
	if f, err := BuildFilter("vsocks"); err == nil {
		f.Release()
		t.Errorf("BuildFilter(\"vsocks\"): no error for a group that does not exist")
	}
}

func names() []string {
	var n []string
	for _, g := range Policy {
		n = append(n, g.Name)
	}
	return n
}

// TestCompileFilter: the program the parent compiles is whole BPF, and
// leaving out a group changes it.
func TestCompileFilter(t *testing.T) {
	full, err := CompileFilter()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkProgram(full); err != nil {
		t.Fatal(err)
	}
	without, err := CompileFilter(UnixGroup)
	if err != nil {
		t.Fatal(err)
	}
	if len(without) >= len(full) {
		t.Errorf("without the unix group: %d bytes, the whole policy %d", len(without), len(full))
	}
	if err := checkProgram(full[:len(full)-1]); err == nil {
		t.Error("a program cut short passed the check")
	}
}
