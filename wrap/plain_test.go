//go:build !linux || !cgo

package wrap_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/degrade"
	"wsh/wrap"
)

// TestNoJailHere: where this build has no jail (CGO_ENABLED=0 go test
// ./wrap runs this on Linux), Wrap says once that commands run
// unsandboxed and calls next for each; Status is Degraded with
// ErrNotSupported as the cause; WSH_REQUIRE_SANDBOX fails New with an
// error that is ErrNotSupported; the opt-out calls next without a word.
func TestNoJailHere(t *testing.T) {
	for _, optOut := range []bool{false, true} {
		var warn strings.Builder
		w, err := wrap.New(config.Config{NoSandbox: optOut}, wrap.Dir(t.TempDir()), wrap.Warnings(&warn))
		if err != nil {
			t.Fatal(err)
		}
		var next []string
		after := func(h interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error {
				next = append(next, args[0])
				return h(ctx, args)
			}
		}
		r, err := interp.New(append(w.RunnerOptions(), interp.ExecHandlers(after))...)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := syntax.NewParser().Parse(strings.NewReader("/bin/true; /bin/true"), "")
		if err := r.Run(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		st := w.Status()
		switch {
		case strings.Join(next, " ") != "/bin/true /bin/true":
			t.Errorf("opt-out %v: next ran %q", optOut, next)
		case optOut && (warn.Len() != 0 || st.Mode != degrade.OptedOut):
			t.Errorf("opted out: %v, warned %q", st, warn.String())
		case !optOut && (strings.Count(warn.String(), "wsh: warning:") != 1 || st.Mode != degrade.Degraded || !errors.Is(st.Cause, degrade.ErrNotSupported)):
			t.Errorf("no jail: %+v, warned %q", st, warn.String())
		}
	}
	if _, err := wrap.New(config.Config{RequireSandbox: config.FloorFull}); !errors.Is(err, degrade.ErrNotSupported) {
		t.Errorf("WSH_REQUIRE_SANDBOX where there is no jail: %v", err)
	}
}
