//go:build linux && cgo

package gitmediate

import (
	"slices"
	"testing"
)

// TestGitRefusedEntries: what a new config adds or changes is judged, not
// what the host's already has; a key on the allowlist passes, one that
// names a program, loads a config or is unknown is refused once; an ext::
// URL is refused; a repository setting git init probes may be added but
// not changed or removed; the format may go from 0 to 1 alone; an
// extension that changes how the repository is read is refused.
func TestGitRefusedEntries(t *testing.T) {
	host := []gitEntry{{key: "core.filemode", value: "true"}, {key: "core.editor", value: "vim"}, {key: "user.name", value: "Host"}}
	for _, c := range []struct {
		name string
		new  []gitEntry
		want []string
	}{
		{"unchanged", host, nil},
		{"removed", host[:1], nil},
		{"routine", append(slices.Clone(host), gitEntry{key: "remote.origin.url", value: "/x"}, gitEntry{key: "branch.main.merge", value: "refs/heads/main"}, gitEntry{key: "user.name", value: "Jail"}), nil},
		{"program", append(slices.Clone(host), gitEntry{key: "core.fsmonitor", value: "x"}, gitEntry{key: "core.fsmonitor", value: "y"}), []string{"core.fsmonitor"}},
		{"changed editor", []gitEntry{host[0], {key: "core.editor", value: "evil"}}, []string{"core.editor"}},
		{"include", []gitEntry{host[0], {key: "include.path", value: "/x"}, {key: "includeif.gitdir:/.path", value: "/x"}}, []string{"include.path", "includeif.gitdir:/.path"}},
		{"alias", []gitEntry{host[0], {key: "alias.st", value: "status"}}, []string{"alias.st"}},
		{"unknown", []gitEntry{host[0], {key: "foo.bar", value: "1"}}, []string{"foo.bar"}},
		{"ext url", []gitEntry{host[0], {key: "remote.o.url", value: "EXT::sh -c x"}}, []string{"remote.o.url"}},
		{"submodule", []gitEntry{host[0], {key: "submodule.s.url", value: "/x"}, {key: "submodule.s.update", value: "!x"}}, []string{"submodule.s.url", "submodule.s.update"}},
		{"filemode changed", []gitEntry{{key: "core.filemode", value: "false"}}, []string{"core.filemode"}},
		{"symlinks added", append(slices.Clone(host), gitEntry{key: "core.symlinks", value: "false"}), nil},
		{"filemode removed", host[1:], []string{"core.filemode"}},
		{"format 0 to 1", []gitEntry{host[0], {key: "core.repositoryformatversion", value: "1"}, {key: "extensions.worktreeconfig", value: "true"}}, nil},
		{"format 2", []gitEntry{host[0], {key: "core.repositoryformatversion", value: "2"}}, []string{"core.repositoryformatversion"}},
		{"ref storage", []gitEntry{host[0], {key: "extensions.refstorage", value: "reftable"}}, []string{"extensions.refstorage"}},
		{"branch ext remote", []gitEntry{host[0], {key: "branch.main.remote", value: "ext::sh -c x"}, {key: "branch.main.pushremote", value: "ext::sh"}}, []string{"branch.main.remote", "branch.main.pushremote"}},
		{"branch remote a path", []gitEntry{host[0], {key: "branch.main.pushremote", value: "/tmp/evil.git"}}, []string{"branch.main.pushremote"}},
		{"branch remote a remote", []gitEntry{host[0], {key: "remote.Up.url", value: "/x"}, {key: "branch.main.remote", value: "Up"}, {key: "branch.dev.remote", value: "."}}, nil},
		{"branch remote without a url", []gitEntry{host[0], {key: "remote.sink.fetch", value: "+refs/heads/*:refs/remotes/sink/*"}, {key: "branch.main.remote", value: "sink"}}, []string{"branch.main.remote"}},
	} {
		var got []string
		for _, r := range refusedEntries(host, c.new) {
			got = append(got, r.Key)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.want)
		}
	}
	// A remote's URL removed while a branch still names it.
	old := []gitEntry{{key: "remote.x.url", value: "/x"}, {key: "branch.main.remote", value: "x"}}
	if r := refusedEntries(old, old[1:]); len(r) != 1 || r[0].Key != "branch.main.remote" {
		t.Errorf("the remote's URL removed under a branch: refused %v", r)
	}
}
