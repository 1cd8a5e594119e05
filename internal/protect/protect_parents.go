//go:build linux && cgo

package protect

import (
	"os"
	"path/filepath"
	"slices"
	"wsh/internal/paths"
)

// A parentName is a name that a tool on the host looks for in the
// directory it runs in and in each directory above it, and whose
// contents run code there or point the tool at code: a command that
// writes one above its start directory (in /tmp, or in /tmp/X/work
// above /tmp/X/work/proj) runs its code in the host's next use of that
// tool in another project below. make is what wsh makes where it is
// missing (an empty directory or an empty file): the kind the tool
// reads as absent, with no error and no change of behaviour.
// docs/sandbox.md ("Config that tools read from parent directories")
// holds the same table, with how each choice was checked.
type parentName struct {
	name string
	make placeholder
}

// parentNames is the table (pyproject.toml an empty file: an empty
// table to uv, poetry and pytest; pytest 8.1 and later may take its
// directory for the rootdir, which runs nothing). An empty file where the tool would take a
// directory as found (npm's prefix search takes a node_modules
// directory, the mvn script tests -d .mvn), an empty directory where
// the tool reads only a file (pytest's is_file, cmd/go's !IsDir) or a
// directory with no config in it (git's discovery, cargo's
// .cargo/config.toml).
var parentNames = []parentName{
	{".git", makeDir},                     // git: core.fsmonitor, hooks, aliases of a repository found upward
	{"go.work", makeDir},                  // go: use and replace send the build to other code
	{"go.mod", makeDir},                   // go: replace, for a directory below with no go.mod
	{".cargo", makeDir},                   // cargo: .cargo/config.toml (rustc-wrapper, aliases)
	{"rust-toolchain", makeDir},           // rustup: the toolchain (a path to one) cargo and rustc run
	{"rust-toolchain.toml", makeDir},      // rustup, as above
	{".mvn", makeEmptyFile},               // mvn: .mvn/jvm.config, maven.config, extensions.xml
	{"node_modules", makeEmptyFile},       // node's require and npm's prefix search walk up
	{".npmrc", makeEmptyFile},             // npm at a prefix found upward; yarn 1 reads every parent's
	{"pytest.ini", makeDir},               // pytest: the rootdir and its addopts (-p plugin)
	{".pytest.ini", makeDir},              // pytest, as above
	{"pytest.toml", makeDir},              // pytest 9, as above
	{".pytest.toml", makeDir},             // pytest 9, as above
	{"pyproject.toml", makeEmptyFile},     // pytest (addopts, pythonpath); uv and poetry read it upward and fail on a directory
	{"uv.toml", makeEmptyFile},            // uv: index-url, what the next install fetches
	{"tox.ini", makeDir},                  // pytest, as above
	{"setup.cfg", makeDir},                // pytest, as above
	{"conftest.py", makeDir},              // pytest imports each parent's conftest.py
	{"CLAUDE.md", makeEmptyFile},          // Claude Code reads every parent's instructions
	{"CLAUDE.local.md", makeEmptyFile},    // as above
	{"AGENTS.md", makeEmptyFile},          // Codex, up to the repository's root
	{"AGENTS.override.md", makeEmptyFile}, // as above
	{"GEMINI.md", makeEmptyFile},          // Gemini CLI, up to the project's root
	{".claude", makeDir},                  // agents' settings, read upward too
	{".codex", makeDir},                   // as above
	{".gemini", makeDir},                  // as above
}

// parentBases are the directories the parent names are protected in:
// the writable paths that are no project (/tmp, $TMPDIR), and each
// directory above a project (the start directory, a WSH_WRITABLE path)
// that lies in a writable path. Never a project's own tree: the project
// and, where it lies in a repository (a monorepo's packages/web, a
// submodule), the outermost repository that holds it, up to its root: a
// project's own .git, go.work, node_modules, pyproject.toml are its
// work. The home too, where it is /tmp or lies above the start
// directory in a writable path (HOME=/tmp, or /tmp/h above /tmp/h/proj:
// the review of the whole found its names left out there); where both
// tables name a path, the home's placeholder is made (candidates).
func (p *Protector) parentBases() []string {
	var tops []string
	for _, pr := range p.projects {
		tops = append(tops, p.projectTop(pr))
	}
	if p.Start != "" && !slices.Contains(p.projects, p.Start) && !p.shared(p.Start) {
		tops = append(tops, p.Start)
	}
	// Started in /tmp or $TMPDIR itself: they are still every user's,
	// and their names are protected (the fifth review: nothing there
	// was), a git init there refused with them.
	var out []string
	add := func(d string) {
		if slices.Contains(out, d) {
			return
		}
		for _, t := range tops {
			if paths.Under(d, t) {
				return
			}
		}
		out = append(out, d)
	}
	for _, r := range p.roots {
		add(r)
	}
	for _, pr := range p.projects {
		for d := filepath.Dir(pr); p.rootOf(d) != ""; d = filepath.Dir(d) {
			add(d)
			if d == "/" {
				break
			}
		}
	}
	return out
}

// projectTop is the root of the outermost repository above the project
// pr (in a writable path, below /tmp or $TMPDIR themselves, which are
// nobody's project), or pr.
func (p *Protector) projectTop(pr string) string {
	top := pr
	for d := filepath.Dir(pr); p.rootOf(d) != "" && !p.shared(d); d = filepath.Dir(d) {
		if p.isRepo(d) {
			top = d
		}
		if d == "/" {
			break
		}
	}
	return top
}

// shared reports whether d is a writable path that is no project: /tmp,
// /var/tmp, $TMPDIR.
func (p *Protector) shared(d string) bool {
	return slices.Contains(p.roots, d) && !slices.Contains(p.projects, d)
}

// inShared reports whether path lies in a writable path that is no
// project (/tmp, $TMPDIR), which every run of every user shares.
func (p *Protector) inShared(path string) bool {
	for _, r := range p.roots {
		if p.shared(r) && paths.Under(path, r) {
			return true
		}
	}
	return false
}

// isRepo reports whether d holds a repository's .git: a file or symlink
// (a worktree's, a submodule's), or a directory that holds a gitdir (not
// a placeholder).
func (p *Protector) isRepo(d string) bool {
	gp := filepath.Join(d, ".git")
	fi, err := os.Lstat(gp)
	switch {
	case err != nil:
		return false
	case !fi.IsDir():
		return true
	}
	ok, err := p.looksLikeGitdir(gp)
	return ok && err == nil
}

// parentCandidates are the parent names in each parent base.
func (p *Protector) parentCandidates() []candidate {
	var out []candidate
	for _, b := range p.parentBases() {
		for _, n := range parentNames {
			out = append(out, candidate{path: filepath.Join(b, n.name), base: b, make: n.make})
		}
	}
	return out
}

// noGitdir reports whether gp, a .git directory, holds no gitdir (none
// of HEAD, config, hooks, objects): wsh's placeholder above a start
// directory, whichever run made it, or any empty one. git reads it as
// none, as it reads a missing .git, and nothing is protected or made
// inside it: else one run would fill the empty placeholder of another
// (started above it, or in it, or as that one makes it) with its own,
// and neither could remove it. Above a project it is itself a parent
// name, bound read-only in the full jail, so no command can fill it; on
// the lower rungs a change to it is said after.
func (p *Protector) noGitdir(gp string) (bool, error) {
	isGitdir, err := p.looksLikeGitdir(gp)
	return !isGitdir, err
}

// parentKind is what the table makes for name, makeNone for a name not
// in it.
func parentKind(name string) placeholder {
	for _, n := range parentNames {
		if n.name == name {
			return n.make
		}
	}
	return makeNone
}

// ParentNames returns the names of the table (a copy), in its order.
func ParentNames() []string {
	var out []string
	for _, n := range parentNames {
		out = append(out, n.name)
	}
	return out
}
