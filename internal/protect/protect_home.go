//go:build linux && cgo

package protect

import (
	"path/filepath"
	"slices"
	"sort"
)

// homeToolFiles are the home's files and directories, besides its shells'
// startup files (defaultProtected), that the host's tools read as code or
// as the name of a program to run: read-only in the jail where the home
// lies in a writable path (HOME in /tmp, the start directory, or named in
// WSH_WRITABLE), matched in the home only (in a project they are not
// read: that is issue 38's "names in parents"). Where one is missing,
// wsh makes what the tool reads as nothing, as homePlaceholders does,
// and only there (docs/config.md says why each is made or not): an empty
// file for a file whose empty form is no config; an empty directory for a
// directory a tool only looks into. makeNone for the rest: a file whose
// empty form means something (an empty ~/.vimrc keeps vim from loading
// defaults.vim, an empty ~/.emacs from loading ~/.emacs.d/init.el, an
// empty YAML or JSON file is not read as none by every version
// of gem, conda, yarn 2 and docker)
// and the names of more than one component, whose first directory would
// be made too. A command can make those; wsh says so after it.
var homeToolFiles = map[string]placeholder{
	".npmrc": makeEmptyFile, ".yarnrc": makeEmptyFile, ".yarnrc.yml": makeNone,
	".gdbinit": makeEmptyFile, ".config/gdb": makeNone,
	".vimrc": makeNone, ".exrc": makeNone, ".vim": makeDir, ".config/nvim": makeNone,
	".emacs": makeNone, ".emacs.el": makeNone, ".emacs.d": makeNone, ".config/emacs": makeNone,
	".tmux.conf": makeEmptyFile, ".config/tmux": makeNone,
	".mavenrc": makeEmptyFile, ".m2/settings.xml": makeNone,
	".gradle/init.d": makeNone, ".gradle/init.gradle": makeNone, ".gradle/init.gradle.kts": makeNone,
	".gradle/gradle.properties": makeNone,
	".pythonrc":                 makeNone, ".pythonrc.py": makeNone, ".ipython": makeNone, ".jupyter": makeNone,
	".config/pip": makeNone, ".pip": makeNone,
	".irbrc": makeEmptyFile, ".pryrc": makeEmptyFile, ".gemrc": makeNone,
	".psqlrc": makeEmptyFile, ".sqliterc": makeEmptyFile,
	".Rprofile": makeEmptyFile, ".Renviron": makeNone,
	".guile":             makeEmptyFile,
	".condarc":           makeNone,
	".cargo/config.toml": makeNone, ".cargo/config": makeNone, ".cargo/bin": makeNone, ".cargo/env": makeNone,
	"go/bin":              makeNone,
	".docker/config.json": makeNone,
	".node_modules":       makeDir, ".node_libraries": makeDir,
	// From the fourth review: go's own env file (GOFLAGS=-toolexec runs a
	// program at every build), debuggers', Mercurial's (hooks), GHCi's,
	// pdb's, direnv's and Julia's startup files.
	".config/go/env": makeNone,
	".lldbinit":      makeEmptyFile, ".pdbrc": makeEmptyFile, ".ghci": makeEmptyFile,
	".hgrc": makeEmptyFile, ".config/hg": makeNone,
	".direnvrc": makeEmptyFile, ".config/direnv": makeNone,
	".julia/config": makeNone,
	// Debian's .profile and Fedora's .bashrc put ~/bin first on PATH
	// (the review of the whole).
	"bin": makeNone,
}

// pythonUserSites are the home's user site-packages directories, whose
// .pth files every python3 of that version runs at its start: those in
// the home, and those of the host's interpreters (/usr/lib/python3.N,
// /usr/local/lib/python3.N), which a command can make. None is made.
func pythonUserSites(home string) []string {
	var out []string
	add := func(version string) {
		p := filepath.Join(".local", "lib", version, "site-packages")
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, pattern := range []string{filepath.Join(home, ".local", "lib", "python*"), "/usr/lib/python3.*", "/usr/local/lib/python3.*"} {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			add(filepath.Base(m))
		}
	}
	sort.Strings(out)
	return out
}

// homeToolCandidates are the home's tool files (homeToolFiles and the
// user site-packages), as candidates matched in the home.
func (p *Protector) homeToolCandidates() []candidate {
	names := make([]string, 0, len(homeToolFiles))
	for n := range homeToolFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []candidate
	for _, n := range names {
		out = append(out, candidate{path: filepath.Join(p.home, n), base: p.home, make: homeToolFiles[n]})
	}
	for _, n := range pythonUserSites(p.home) {
		out = append(out, candidate{path: filepath.Join(p.home, n), base: p.home})
	}
	return out
}

// homeToolNames are the names of homeToolFiles, sorted, with the user
// site-packages pattern: what docs/config.md's table lists.
func homeToolNames() []string {
	var out []string
	for n := range homeToolFiles {
		out = append(out, n)
	}
	out = append(out, ".local/lib/python*/site-packages")
	sort.Strings(out)
	return out
}
