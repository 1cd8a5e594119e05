// Package unsupported finds, in a parsed script, the constructs that
// mvdan.cc/sh runs to a wrong result without an error, so that wsh refuses
// the script with a message rather than run it wrong. Each is listed in
// the README's known differences; a fix upstream shows in the
// differential test (internal/e2e), which then fails until the check goes.
package unsupported

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Check returns the first construct of f that mvdan.cc/sh would run to a
// wrong result, as a syntax.ParseError (wsh exits 2 on it, as bash on a
// syntax error), or nil.
func Check(f *syntax.File) error {
	assoc := associativeArrays(f)
	var found error
	syntax.Walk(f, func(n syntax.Node) bool {
		if found != nil {
			return false
		}
		var why string
		switch n := n.(type) {
		case *syntax.ParamExp:
			why = check(n, assoc)
		case *syntax.Redirect:
			why = redirect(n)
		}
		if why != "" {
			found = syntax.ParseError{Filename: f.Name, Pos: n.Pos(), Text: why}
		}
		return true
	})
	return found
}

// redirect refuses a redirection of a descriptor above 2 (3>&1, exec
// 6>&1, >&5, {fd}>file): mvdan.cc/sh fails each with a message a script
// may hide (2>/dev/null), and a script that tests for the descriptors so
// (an autoconf configure: `(exec 3>&1) 2>/dev/null || exec 1>/dev/null`)
// then goes on with its output thrown away, and exits 0.
func redirect(rd *syntax.Redirect) string {
	fd := ""
	switch {
	case rd.N != nil && rd.N.Value != "0" && rd.N.Value != "1" && rd.N.Value != "2":
		fd = rd.N.Value
	case (rd.Op == syntax.DplOut || rd.Op == syntax.DplIn) && rd.Word != nil:
		if w := rd.Word.Lit(); w != "" && w != "-" && w != "0" && w != "1" && w != "2" {
			fd = w
		}
	}
	if fd == "" {
		return ""
	}
	return "redirections of descriptors above 2 (here " + fd + ") are not supported by mvdan.cc/sh, which wsh runs on: " +
		"a script that tests for them (an autoconf configure does) would go on with its output thrown away"
}

func check(pe *syntax.ParamExp, assoc []string) string {
	switch {
	case pe.Repl != nil && anchored(pe.Repl.Orig):
		return "${VAR/#PATTERN/...} and ${VAR/%PATTERN/...} are not supported by mvdan.cc/sh, which wsh runs on: " +
			"it would take the # or % as part of the pattern, not as an anchor"
	case pe.Length && pe.Param != nil && slices.Contains(assoc, pe.Param.Value) && pe.Index != nil && allElements(pe.Index):
		return "${#" + pe.Param.Value + "[@]} of an associative array is not supported by mvdan.cc/sh, which wsh runs on: " +
			"it would count 1 whatever the keys"
	case pe.Exp != nil && (pe.Exp.Op == syntax.AlternateUnset || pe.Exp.Op == syntax.AlternateUnsetOrNull) && substitutes(pe.Exp.Word):
		return "${VAR:+...$(...)...} is not supported by mvdan.cc/sh, which wsh runs on: " +
			"it would run the command substitution even when VAR is unset or empty; write it with if"
	}
	return ""
}

// anchored says whether a replacement's pattern starts with # or %.
func anchored(w *syntax.Word) bool {
	if w == nil || len(w.Parts) == 0 {
		return false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	return ok && (strings.HasPrefix(lit.Value, "#") || strings.HasPrefix(lit.Value, "%"))
}

// allElements says whether an index is @ or *.
func allElements(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// substitutes says whether w runs a command (a command or process
// substitution).
func substitutes(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// associativeArrays are the names f declares with -A (declare, local,
// typeset).
func associativeArrays(f *syntax.File) []string {
	var names []string
	syntax.Walk(f, func(n syntax.Node) bool {
		dc, ok := n.(*syntax.DeclClause)
		if !ok {
			return true
		}
		isAssoc := false
		for _, a := range dc.Args {
			if a.Naked && a.Value == nil && a.Name == nil {
				continue
			}
			if a.Naked && a.Name == nil && a.Value != nil && strings.HasPrefix(a.Value.Lit(), "-") && strings.Contains(a.Value.Lit(), "A") {
				isAssoc = true
				continue
			}
			if isAssoc && a.Name != nil {
				names = append(names, a.Name.Value)
			}
		}
		return true
	})
	return names
}
