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

// TestMark runs scripts in mvdan.cc/sh with an exec handler that records,
// for each command (its first argument), whether InBackground says it
// runs in a background job; without Mark every command would be a
// foreground one. Mark's own calls are counted apart: a start before each
// job, in the foreground, and an end at each job's end (and one more from
// its EXIT trap when it exits).
func TestMark(t *testing.T) {
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
		// The job's stderr is the one its own redirections give it; a
		// job that exits is seen to end.
		{script: "echo err 2>/dev/null >&2 & wait"},
		{script: "bg1 & exit 3 & wait", bg: []string{"bg1"}},
		// Not exported: the job's commands do not get it.
		{script: "env_has & wait", bg: []string{"env_has"}},
		{script: "fg1; fg2", fg: []string{"fg1", "fg2"}, unmarked: true},
	} {
		t.Run(c.script, func(t *testing.T) {
			var mu sync.Mutex
			var bg, fg []string
			starts, ends := 0, 0
			exec := func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
				return func(ctx context.Context, args []string) error {
					hc := interp.HandlerCtx(ctx)
					mu.Lock()
					defer mu.Unlock()
					switch args[0] {
					case StartCall:
						if !InBackground(hc.Env) {
							starts++
						}
						return nil
					case EndCall:
						if InBackground(hc.Env) {
							ends++
						}
						return nil
					}
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
			Mark(f)
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
			if jobs := strings.Count(c.script, "&") - strings.Count(c.script, ">&"); starts != jobs || ends < jobs {
				t.Errorf("%d starts in the foreground and %d ends in jobs, want %d and at least %d", starts, ends, jobs, jobs)
			}
			if out.String() != c.out || errb.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want %q and nothing", out.String(), errb.String(), c.out)
			}
		})
	}
}
