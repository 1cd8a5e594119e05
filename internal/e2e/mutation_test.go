//go:build linux && cgo

package e2e

import (
	"slices"
	"testing"

	"wsh/internal/proto"
	"wsh/internal/seccomp"
)

// mutationArgs run the probe's seccomp attempts only, with the file handles
// taken on a tmpfs of the throwaway namespace.
var mutationArgs = []string{"-tmpfs", "-only", "privs,vsock,io_uring,foreign,namespaces,mounts,keyrings,kernel,siginfo,tty,setid"}

// TestMutationPolicyGroups loads wsh's own seccomp filter (seccomp.BuildFilter)
// into the attack probe, in a throwaway `unshare -Urmn` namespace where the
// probe is root of its user namespace: there the kernel itself allows what
// the filter refuses. With the whole filter every attempt of a group gives
// the jail's answer; with the filter built without one group, that group's
// attempts give the kernel's own answer again (the control's) while every
// other group's stay refused. So each group's rule is what refuses its
// attempts, and TestContainment fails if the rule goes.
func TestMutationPolicyGroups(t *testing.T) {
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			control := attackUnshared(t, u, "-Urmn", nil, mutationArgs...)
			full := attackUnshared(t, u, "-Urmn", nil, append(mutationArgs, "-filter")...)
			checkFullFilter(t, u, control, full)
			for _, g := range seccomp.Policy() {
				if slices.Contains(proto.LowerRungGroups(), g.Name) {
					continue // not in the full jail's filter: TestLadderLowerRungGroups
				}
				if g.Name == proto.GitGroup {
					// It refuses nothing itself: renames go to wsh's
					// listener. TestGitGroupWithoutSupervisor (package
					// seccomp) shows the rule is what sends them there,
					// TestGitConfigRenameCases what wsh answers.
					continue
				}
				t.Run(g.Name, func(t *testing.T) {
					without := attackUnshared(t, u, "-Urmn", nil, append(mutationArgs, "-filter", "-skip", g.Name)...)
					checkWithout(t, g.Name, control, full, without)
				})
			}
		})
	}
}

// checkFullFilter checks that the whole filter, in a namespace where the
// kernel allows the attempts, gives each filtered attempt its jail answer.
func checkFullFilter(t *testing.T, u user, control, full map[string]string) {
	t.Helper()
	if full["status:Seccomp"] != "2" || full["status:NoNewPrivs"] != "1" {
		t.Fatalf("-filter: Seccomp %q, NoNewPrivs %q; want 2 and 1", full["status:Seccomp"], full["status:NoNewPrivs"])
	}
	for _, e := range expectations {
		if e.group == "" {
			continue
		}
		if !e.control.holds(u, control[e.attempt]) {
			t.Errorf("%s unfiltered: %q, want %q", e.attempt, control[e.attempt], e.control.of(u))
		}
		if !e.jail.holds(u, full[e.attempt]) {
			t.Errorf("%s with the whole filter: %q, want %q", e.attempt, full[e.attempt], e.jail.of(u))
		}
	}
}

// checkWithout checks the run with the filter built without group: its
// attempts give the kernel's answer again, the others stay as filtered.
func checkWithout(t *testing.T, group string, control, full, without map[string]string) {
	t.Helper()
	caught := 0
	for _, e := range expectations {
		a := e.attempt
		switch {
		case e.group == group && without[a] != control[a]:
			t.Errorf("%s without %s: %q, want the kernel's own %q", a, group, without[a], control[a])
		case e.group == group && without[a] != full[a]:
			caught++
			t.Logf("%-32s whole filter %-8q without %s %q", a, full[a], group, without[a])
		case e.group == group:
			t.Logf("%-32s %q either way: the kernel refuses it too", a, full[a])
		case e.group != "" && without[a] != full[a]:
			t.Errorf("%s (group %s) without %s: %q, want %q as with the whole filter", a, e.group, group, without[a], full[a])
		}
	}
	if caught == 0 {
		t.Errorf("no attempt tells the filter without %s from the whole filter", group)
	}
}
