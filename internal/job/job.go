// Package job gives wsh's exec handler what mvdan.cc/sh does not tell it
// about background jobs (cmd &): whether a command runs in one, which one,
// and when a job has ended, so that an interrupt (a terminal's Ctrl-C)
// skips them, and kill %N, kill $! and jobs reach them.
//
// mvdan.cc/sh runs a background job in a copy of the interpreter, as it
// runs the sides of a pipeline, and tells an exec handler neither. Mark
// rewrites a script's syntax tree, before it runs, so that each
// background statement S becomes, in the list it is in:
//
//	wsh-job:start 'S'                 # in the shell that starts the job
//	{ trap wsh-job:end EXIT; S; wsh-job:end; } 2>&${__wsh_background=}2 &
//
// The start call, a command the exec handler runs itself, registers the
// job and sets JobVar in the starting shell, which the job's copy of the
// interpreter takes with it. The redirection changes nothing (2>&2); its
// word, expanded in the job's own interpreter, sets BackgroundVar there,
// so the job's commands (and its pipelines and subshells) see it and no
// other command does. The end call, at the end or when the job exits
// (errexit, exit: the trap), says the job is over and with what status.
//
// What differs from bash: $? is 0 when a job starts (bash: the status
// before it), and a job whose script sets its own EXIT trap is not seen
// to end by an exit (only at its end). Jobs started by eval or source are
// not marked: their commands count as foreground ones.
package job

import (
	"reflect"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// BackgroundVar is the shell variable set in a background job, and JobVar
// the one that holds the id of the job a start call registered last (in
// a job: its own). Neither is exported: commands do not get them.
const (
	BackgroundVar = "__wsh_background"
	JobVar        = "__wsh_job"
)

// StartCall and EndCall are the commands Mark adds, which the exec
// handler runs itself. Called by a script, they change nothing but the
// job table.
const (
	StartCall = "wsh-job:start"
	EndCall   = "wsh-job:end"
)

// marker is the redirection Mark adds: 2>&2, the 2 written as
// ${BackgroundVar=}2.
var marker = parseStmt(": 2>&${" + BackgroundVar + "=}2").Redirs[0]

func parseStmt(src string) *syntax.Stmt {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		panic("job: " + src + " does not parse: " + err.Error())
	}
	return f.Stmts[0]
}

var stmtList = reflect.TypeFor[[]*syntax.Stmt]()

// Mark rewrites every background statement of f, at any depth (function
// bodies, loops, command substitutions), as the package says.
func Mark(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		v := reflect.ValueOf(n)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return true
		}
		v = v.Elem()
		for i := range v.NumField() {
			if fv := v.Field(i); fv.Type() == stmtList && fv.CanSet() {
				fv.Set(reflect.ValueOf(markList(fv.Interface().([]*syntax.Stmt))))
			}
		}
		return true
	})
}

// markList is stmts with each background statement rewritten. Walk goes
// on into the new nodes: the statements it wraps are no longer
// background ones, so nothing is rewritten twice.
func markList(stmts []*syntax.Stmt) []*syntax.Stmt {
	var out []*syntax.Stmt
	for _, st := range stmts {
		if !st.Background && !st.Disown {
			out = append(out, st)
			continue
		}
		out = append(out, call(st.Pos(), StartCall, source(st)))
		inner := &syntax.Stmt{Position: st.Pos(), Cmd: st.Cmd, Negated: st.Negated, Semicolon: st.Semicolon}
		trap := call(st.Pos(), "trap", EndCall, "EXIT")
		job := &syntax.Stmt{
			Position:   st.Pos(),
			Cmd:        &syntax.Block{Lbrace: st.Pos(), Rbrace: st.End(), Stmts: []*syntax.Stmt{trap, inner, call(st.Pos(), EndCall)}},
			Background: st.Background,
			Disown:     st.Disown,
			Coprocess:  st.Coprocess,
			// First: the script's own redirections come after it.
			Redirs: append([]*syntax.Redirect{marker}, st.Redirs...),
		}
		out = append(out, job)
	}
	return out
}

// call is a statement that calls name with literal arguments.
func call(pos syntax.Pos, name string, args ...string) *syntax.Stmt {
	ce := &syntax.CallExpr{}
	for _, a := range append([]string{name}, args...) {
		ce.Args = append(ce.Args, &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Left: pos, Right: pos, Value: a}}})
	}
	return &syntax.Stmt{Position: pos, Cmd: ce}
}

// source is how jobs shows a job: its command as the script wrote it.
func source(st *syntax.Stmt) string {
	var b strings.Builder
	cp := *st
	cp.Background, cp.Disown = false, false
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, &cp); err != nil {
		return "?"
	}
	return strings.TrimSpace(b.String())
}

// HasJobs says whether f starts a background job.
func HasJobs(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && (st.Background || st.Disown) {
			found = true
		}
		return !found
	})
	return found
}

// Internal says whether args is one of the calls Mark adds (which an
// embedder's call handler is not shown).
func Internal(args []string) bool {
	switch {
	case args[0] == StartCall || args[0] == EndCall:
		return true
	case len(args) == 3 && args[0] == "trap" && args[1] == EndCall && args[2] == "EXIT":
		return true
	}
	return false
}

// InBackground says whether a command runs in a background job: env is
// the interpreter's environment for it (interp.HandlerContext.Env).
func InBackground(env expand.Environ) bool {
	return env.Get(BackgroundVar).IsSet()
}

// Of is the id of the background job a command runs in, or "".
func Of(env expand.Environ) string {
	if !InBackground(env) {
		return ""
	}
	return env.Get(JobVar).String()
}
