//go:build linux && cgo

package gitmediate

import (
	"strings"
)

// The keys of a repository's config that a command may add or change
// through wsh (docs/config.md says why each family is here): what routine
// git writes, none of which names a program, a file git loads, or a
// command the host's git would run. A pattern's "*" is any subsection.
// Everything else is refused, said by name: an allowlist, because git
// learns new keys that run programs, and a key missing here costs a
// routine command, not the host.
var gitAllowedKeys = map[string]bool{
	// git remote add / set-url, git clone, git fetch --prune
	"remote.*.url": true, "remote.*.pushurl": true, "remote.*.fetch": true, "remote.*.push": true,
	"remote.*.tagopt": true, "remote.*.prune": true, "remote.*.prunetags": true, "remote.*.mirror": true,
	"remote.*.skipdefaultupdate": true, "remote.*.skipfetchall": true,
	// git branch --set-upstream-to, push -u, branch -M, checkout --track
	"branch.*.remote": true, "branch.*.merge": true, "branch.*.rebase": true, "branch.*.pushremote": true,
	"branch.*.description": true,
	// who commits
	"user.name": true, "user.email": true, "user.signingkey": true,
	// git init and clone: the repository's format
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true, "core.logallrefupdates": true,
	"core.ignorecase": true, "core.precomposeunicode": true, "core.symlinks": true, "core.autocrlf": true,
	"core.eol": true, "core.sparsecheckout": true, "core.sparsecheckoutcone": true,
	"extensions.worktreeconfig": true, // not objectformat, refstorage: set to what the repository is not, it cannot be read
	"init.defaultbranch":        true,
	// pull, push and fetch settings
	"pull.rebase": true, "pull.ff": true, "push.default": true, "push.autosetupremote": true,
	"fetch.prune": true, "fetch.prunetags": true,
	// Not submodule.*: its url is what the host's next git submodule
	// update clones and checks out, as .gitmodules's is, which is
	// protected for that; its update may be "!command".
}

// gitKeyPattern is key's pattern: its subsection, if any, as "*".
func gitKeyPattern(key string) string {
	i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if i < 0 || i == j {
		return key
	}
	return key[:i] + ".*" + key[j:]
}

// gitKeyRefusal is why an entry may not be added or changed, or "".
func gitKeyRefusal(e gitEntry) string {
	p := gitKeyPattern(e.key)
	if gitAllowedKeys[p] {
		if gitURLKeys[p] && strings.HasPrefix(strings.ToLower(e.value), "ext::") {
			return "is an ext:: URL, a command git runs to reach the remote"
		}
		if p == "core.repositoryformatversion" && e.value != "0" && e.value != "1" {
			return "is not a format this git reads (0 or 1)"
		}
		return ""
	}
	section := p[:max(strings.IndexByte(p, '.'), 0)]
	switch {
	case section == "include" || section == "includeif":
		return "loads another config file, which git on the host would read"
	case gitProgramKeys[p] || gitProgramSections[section]:
		return "names a program or command the host's git would run"
	}
	return "is not one of the keys wsh lets a command write (docs/config.md)"
}

// gitURLKeys are the allowed keys whose value git may take as a URL (a
// branch's remote that names no remote is one).
var gitURLKeys = map[string]bool{
	"remote.*.url": true, "remote.*.pushurl": true, "branch.*.remote": true, "branch.*.pushremote": true,
}

// gitProgramKeys are keys outside the allowlist known to name a program,
// for a sharper message.
var gitProgramKeys = map[string]bool{
	"core.fsmonitor": true, "core.hookspath": true, "core.sshcommand": true, "core.editor": true,
	"core.pager": true, "core.askpass": true, "core.gitproxy": true, "sequence.editor": true,
	"diff.*.textconv": true, "diff.*.command": true, "merge.*.driver": true, "diff.external": true,
	"submodule.*.update": true, "remote.*.uploadpack": true, "remote.*.receivepack": true, "remote.*.proxy": true,
	"remote.*.vcs": true, "instaweb.httpd": true,
}

// gitProgramSections are sections whose keys name programs or commands
// (alias: "!cmd", and any alias can pass -c options to git).
var gitProgramSections = map[string]bool{
	"filter": true, "credential": true, "alias": true, "uploadpack": true, "receive": true,
	"gpg": true, "pager": true, "sendemail": true,
}

// gitFixedKeys are allowed only where the host's config has none, and
// never removed where it has: git init sets them from what it finds, and
// in the jail it finds the config read-only (its chmod test fails:
// core.filemode false), so a git init run again in the jail would turn
// the host's settings off (and a removal then an addition would do the
// same in two writes). core.repositoryformatversion may go from 0 to 1
// (git sparse-checkout does, with extensions.worktreeConfig), never else.
var gitFixedKeys = map[string]bool{
	"core.filemode": true, "core.bare": true, "core.ignorecase": true,
	"core.precomposeunicode": true, "core.symlinks": true, "core.repositoryformatversion": true,
}

// A Refusal is a key a new config adds or changes that may not be, and
// why.
type Refusal struct{ Key, Why string }

// refusedEntries are the entries of new that old does not have (the same
// key and value as many times) and that are not allowed, once per key.
// An entry the host's config has stays, whatever its key; one removed is
// fine.
func refusedEntries(old, new []gitEntry) []Refusal {
	have := map[gitEntry]int{}
	keys := map[string]bool{}
	for _, e := range old {
		have[e]++
		keys[e.key] = true
	}
	var out []Refusal
	said := map[string]bool{}
	oldRemotes, remotes := remoteNames(old), remoteNames(new)
	for _, e := range new {
		p := gitKeyPattern(e.key)
		branchRemote := (p == "branch.*.remote" || p == "branch.*.pushremote") && e.value != "." && !remotes[e.value]
		if have[e] > 0 {
			have[e]--
			if branchRemote && oldRemotes[e.value] && !said[e.key] {
				// Its remote's URL removed: git takes the name as a path now.
				said[e.key] = true
				out = append(out, Refusal{e.key, "would name a remote the config no longer has: git takes it as a URL, where the host's next fetch or push would go"})
			}
			continue
		}
		why := gitKeyRefusal(e)
		if why == "" && branchRemote {
			why = "names no remote of the config: git takes it as a URL, where the host's next fetch or push would go"
		}
		if why == "" && gitFixedKeys[e.key] && keys[e.key] && !formatUp(old, e) {
			why = "would change what the host's git found when it made the repository"
		}
		if why != "" && !said[e.key] {
			said[e.key] = true
			out = append(out, Refusal{e.key, why})
		}
	}
	newKeys := map[string]bool{}
	for _, e := range new {
		newKeys[e.key] = true
	}
	for k := range keys {
		if gitFixedKeys[k] && !newKeys[k] && !said[k] {
			said[k] = true
			out = append(out, Refusal{k, "would remove what the host's git found when it made the repository"})
		}
	}
	return out
}

// Refusals are the keys of the config content that wsh would refuse to
// add to a config (one of a run's repositories, which the host's git
// would read), once per key; an error where git cannot read it.
func Refusals(content []byte) ([]Refusal, error) {
	es, err := gitEntries(content)
	if err != nil {
		return nil, err
	}
	return refusedEntries(nil, es), nil
}

// remoteNames are the remotes es gives a URL (remote.NAME.url): a
// remote without one is taken by its name, as a path.
func remoteNames(es []gitEntry) map[string]bool {
	out := map[string]bool{}
	for _, e := range es {
		i, j := strings.IndexByte(e.key, '.'), strings.LastIndexByte(e.key, '.')
		if i > 0 && j > i && e.key[:i] == "remote" && e.key[j+1:] == "url" {
			out[e.key[i+1:j]] = true
		}
	}
	return out
}

// formatUp says e takes core.repositoryformatversion from 0 (or none) to
// 1, as git sparse-checkout does.
func formatUp(old []gitEntry, e gitEntry) bool {
	if e.key != "core.repositoryformatversion" || e.value != "1" {
		return false
	}
	for _, o := range old {
		if o.key == e.key && o.value != "0" {
			return false
		}
	}
	return true
}
