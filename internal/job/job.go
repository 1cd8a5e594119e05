// Package job tells a command of a background job (cmd &) from one in the
// foreground, for the interrupt that a terminal's Ctrl-C is.
//
// mvdan.cc/sh runs a background job in a copy of the interpreter, as it
// runs the sides of a pipeline, and tells an exec handler neither which
// it is. MarkBackground adds to every background statement of a script a
// redirection that changes nothing (2>&2) and whose word, as it is
// expanded in the job's own interpreter, sets BackgroundVar there (to the
// empty string, by ${BackgroundVar=}): the job's commands, its pipelines
// and subshells see it set, and nothing else does. Nothing runs for it,
// so $? in the job is the parent's, as in bash.
package job

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// BackgroundVar is the shell variable set in a background job: not
// exported, so its commands do not get it.
const BackgroundVar = "__wsh_background"

// marker is the redirection MarkBackground adds: 2>&2, the 2 written as
// ${BackgroundVar=}2.
var marker = func() *syntax.Redirect {
	f, err := syntax.NewParser().Parse(strings.NewReader(": 2>&${"+BackgroundVar+"=}2"), "")
	if err != nil {
		panic("job: the marker does not parse: " + err.Error())
	}
	return f.Stmts[0].Redirs[0]
}()

// MarkBackground marks every background statement of f, at any depth
// (function bodies, loops, command substitutions), as a job's.
func MarkBackground(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && (st.Background || st.Disown) {
			// First: the script's own redirections come after it, so
			// the job's stderr is still theirs.
			st.Redirs = append([]*syntax.Redirect{marker}, st.Redirs...)
		}
		return true
	})
}

// InBackground says whether a command runs in a background job: env is
// the interpreter's environment for it (interp.HandlerContext.Env).
func InBackground(env expand.Environ) bool {
	return env.Get(BackgroundVar).IsSet()
}
