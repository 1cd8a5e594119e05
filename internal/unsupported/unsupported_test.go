package unsupported

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestCheck: each construct mvdan.cc/sh runs wrong is refused, with its
// position and what it would do; the constructs next to it that it runs
// right are not.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		script, want string // want: "" (runs), or a piece of the message
	}{
		{"echo ${s/#a/X}", "1:6: ${VAR/#PATTERN/...}"},
		{"echo ${s/%a/X}", "not as an anchor"},
		{"echo ${s//#a/X}", "anchor"},
		{"echo ${s/a/X} ${s//a#/X} ${s#a} ${s%a}", ""},
		{"declare -A m=([x]=1); echo ${#m[@]}", "associative"},
		{"f() { local -A m; echo ${#m[*]}; }", "associative"},
		{"typeset -gA m; echo x; echo ${#m[@]}", "associative"},
		{"declare -a m=(1 2); echo ${#m[@]} ${#s}", ""},
		{"declare -A m; echo ${#m[x]} ${#other[@]}", ""},
		{"echo ${X:+$(date)}", "${VAR:+...$(...)...}"},
		{"echo ${X+a$(date)}", "command substitution"},
		{"echo ${X:+word} ${X:-$(date)} ${X:=$(date)}", ""},
		{"exec 6>&1", "1:6: redirections of descriptors above 2 (here 6)"},
		{"if (exec 3>&1) 2>/dev/null; then :; fi", "(here 3)"},
		{"echo x >&5", "(here 5)"},
		{"cat <&4", "(here 4)"},
		{"exec {fd}>f", "(here {fd})"},
		{"echo x 2>&1 >&2 1>/dev/null 0</dev/null 2>&-; cat <&0 >&-", ""},
	} {
		f, err := syntax.NewParser().Parse(strings.NewReader(c.script), "s.sh")
		if err != nil {
			t.Fatal(err)
		}
		err = Check(f)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: refused: %v", c.script, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want an error with %q", c.script, err, c.want)
		case err != nil && !strings.HasPrefix(err.Error(), "s.sh:"):
			t.Errorf("%q: %v: not named by file and position", c.script, err)
		}
	}
}
