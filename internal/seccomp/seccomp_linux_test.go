//go:build cgo

package seccomp

import (
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"wsh/internal/proto"
)

// TestPolicyGroupNames checks that every group of the policy has a name of
// its own, which is what a mutation test passes to BuildFilter.
func TestPolicyGroupNames(t *testing.T) {
	var seen []string
	for _, g := range policy {
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
	for _, g := range policy {
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
	if err := proto.CheckFilter(full); err != nil {
		t.Fatal(err)
	}
	without, err := CompileFilter(proto.UnixGroup)
	if err != nil {
		t.Fatal(err)
	}
	if len(without) >= len(full) {
		t.Errorf("without the unix group: %d bytes, the whole policy %d", len(without), len(full))
	}
	if err := proto.CheckFilter(full[:len(full)-1]); err == nil {
		t.Error("a program cut short passed the check")
	}
}

// syscallPrefix is how the running kernel names its system calls'
// entry points in /proc/kallsyms, on this architecture.
var syscallPrefix = map[string]string{"amd64": "__x64_sys_", "arm64": "__arm64_sys_"}[runtime.GOARCH]

// mountish matches the names of the calls that mount, unmount, change a
// mount or a root: what the mounts group is for.
var mountish = regexp.MustCompile(`mount|^fs(open|config|pick)$|^open_tree|^pivot_root$|^chroot$`)

// notMountCalls are kernel names that match mountish but are no call to
// refuse: listmount and statmount only read the caller's own mounts;
// oldumount is not in this architecture's table; umount is the entry
// point of umount2.
var notMountCalls = map[string]string{"listmount": "reads", "statmount": "reads", "oldumount": "not a call here", "umount": "umount2"}

// TestMountGroupHasEveryMountCall walks the running kernel's system calls
// by name (/proc/kallsyms) and checks that every one that mounts is in the
// mounts group, so that the next new one (as open_tree_attr was, in 6.15)
// fails this test rather than passing the filter.
func TestMountGroupHasEveryMountCall(t *testing.T) {
	if syscallPrefix == "" {
		t.Fatalf("no kallsyms prefix for %s", runtime.GOARCH)
	}
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[2], syscallPrefix) {
			continue
		}
		seen++
		name := strings.TrimPrefix(f[2], syscallPrefix)
		if !mountish.MatchString(name) {
			continue
		}
		if alias, ok := notMountCalls[name]; ok {
			if slices.Contains(mountCalls, alias) || alias == "reads" || alias == "not a call here" {
				continue
			}
		}
		if !slices.Contains(mountCalls, name) {
			t.Errorf("the kernel has %s, which the mounts group does not refuse", name)
		}
	}
	if seen < 300 {
		t.Fatalf("only %d system calls in /proc/kallsyms: cannot walk the kernel's table", seen)
	}
	for _, c := range mountCalls {
		if _, err := syscallOf(c); err != nil {
			t.Errorf("the mounts group names %s, which this build cannot resolve: %v", c, err)
		}
	}
}

// TestPolicyIsACopy: what Policy returns cannot change the filter.
func TestPolicyIsACopy(t *testing.T) {
	p := Policy()
	n := len(p[0].Calls)
	p[0].Calls[0] = "changed"
	p[0] = RuleGroup{}
	if q := Policy(); q[0].Name == "" || q[0].Calls[0] == "changed" || len(q[0].Calls) != n {
		t.Errorf("a change to Policy's result reached the policy: %+v", q[0])
	}
}
