//go:build linux && cgo

package wrap_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/wrap"
)

// An interpreter of your own, with a middleware of your own before wsh's:
// it sees every command, and each command runs in the jail, which it
// reads back from the kernel.
func Example() {
	c, err := config.Load(os.Environ())
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := wrap.New(c, wrap.Dir(os.TempDir()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close()

	var mu sync.Mutex
	var seen []string
	record := func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			mu.Lock()
			seen = append(seen, args[0])
			mu.Unlock()
			return next(ctx, args)
		}
	}
	opts := []interp.RunnerOption{
		interp.StdIO(nil, os.Stdout, os.Stderr),
		interp.Dir(os.TempDir()),
		interp.Env(expand.ListEnviron("PATH=/usr/bin:/bin")),
		interp.ExecHandlers(record),
	}
	r, err := interp.New(append(opts, w.RunnerOptions()...)...)
	if err != nil {
		fmt.Println(err)
		return
	}
	script, _ := syntax.NewParser().Parse(strings.NewReader(`grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; ls /sys/class/net`), "")
	err = r.Run(context.Background(), script)
	fmt.Println("error:", err)
	fmt.Println("seen:", strings.Join(seen, " "))
	st := w.Status()
	fmt.Println("in force:", st.Mode, st.Rung)
	// Output:
	// NoNewPrivs:	1
	// Seccomp:	2
	// lo
	// error: <nil>
	// seen: grep ls
	// in force: confined full
}
