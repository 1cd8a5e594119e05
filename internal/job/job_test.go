package job

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// TestMarkBackground runs scripts in mvdan.cc/sh with an exec handler that
// records, for each command (its first argument), whether InBackground
// says it runs in a background job; without MarkBackground every command
// would be a foreground one.
func TestMarkBackground(t *testing.T) {
	for _, c := range []struct {
		script   string
		bg, fg   []string
		out      string // what the script prints
		unmarked bool   // without the marker, the same (a control)
	}{
		{script: "fg1; bg1 & wait; fg2", bg: []string{"bg1"}, fg: []string{"fg1", "fg2"}},
		{script: "fg1 | fg2; { bg1; bg2 | bg3; } & wait", bg: []string{"bg1", "bg2", "bg3"}, fg: []string{"fg1", "fg2"}},
		{script: "f() { x$1; }; f1 & f 2; wait", bg: []string{"f1"}, fg: []string{"x2"}},
		{script: "(bg1; (bg2)) & echo $(fg1); wait", bg: []string{"bg1", "bg2"}, fg: []string{"fg1"}, out: "\n"},
		{script: "while fg1; do bg1 & break; done; wait; fg2", bg: []string{"bg1"}, fg: []string{"fg1", "fg2"}},
		// $? in the job is the parent's, and the job's stderr is the
		// one its own redirections give it.
		{script: "false; echo $? &\nwait; echo err 2>/dev/null >&2 & wait", out: "1\n"},
		// Not exported: the job's commands do not get it.
		{script: "env_has & wait", bg: []string{"env_has"}},
		{script: "fg1; fg2", fg: []string{"fg1", "fg2"}, unmarked: true},
	} {
		t.Run(c.script, func(t *testing.T) {
			var mu sync.Mutex
			var bg, fg []string
			exec := func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
				return func(ctx context.Context, args []string) error {
					hc := interp.HandlerCtx(ctx)
					mu.Lock()
					defer mu.Unlock()
					if InBackground(hc.Env) {
						bg = append(bg, args[0])
					} else {
						fg = append(fg, args[0])
					}
					if args[0] == "env_has" {
						for name, vr := range hc.Env.Each {
							if name == BackgroundVar && vr.Exported {
								t.Errorf("%s is exported", BackgroundVar)
							}
						}
					}
					return nil
				}
			}
			f, err := syntax.NewParser().Parse(strings.NewReader(c.script), "")
			if err != nil {
				t.Fatal(err)
			}
			MarkBackground(f)
			var out, errb bytes.Buffer
			r, err := interp.New(interp.ExecHandlers(exec), interp.StdIO(nil, &out, &errb))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Run(context.Background(), f); err != nil {
				t.Fatalf("Run: %v; stderr %q", err, errb.String())
			}
			slices.Sort(bg)
			slices.Sort(fg)
			if !slices.Equal(bg, c.bg) || !slices.Equal(fg, c.fg) {
				t.Errorf("background %q, foreground %q; want %q, %q", bg, fg, c.bg, c.fg)
			}
			if out.String() != c.out || errb.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want %q and nothing", out.String(), errb.String(), c.out)
			}
		})
	}
}
