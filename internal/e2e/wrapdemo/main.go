//go:build linux && cgo

// Command wrapdemo is a test helper: an interpreter of its own, as an
// agent tool has one, with package wrap plugged in. It runs the script
// given as its argument with a middleware of its own before wrap's (which
// prints "seen: NAME" for every command) and one after it (which prints
// "next: NAME" for every command wrap passed on), then prints what is in
// force ("status: MODE RUNG") and exits with the script's status. With
// WRAPDEMO_ENV_AFTER or WRAPDEMO_CALL_AFTER set, it gives the interpreter
// an interp.Env or interp.CallHandler of its own after wrap's options.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/jail"
	"wsh/wrap"
)

func main() {
	jail.Init()
	os.Exit(run(os.Args[1:]))
}

// say prints one line of the demo's own on stderr.
func say(format string, a ...any) { fmt.Fprintf(os.Stderr, "wrapdemo: "+format+"\n", a...) }

func run(args []string) int {
	if len(args) != 1 {
		say("usage: wrapdemo SCRIPT")
		return 2
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(args[0]), "")
	if err != nil {
		say("%v", err)
		return 2
	}
	c, err := config.Load(os.Environ())
	if err != nil {
		say("%v", err)
		return 2
	}
	w, err := wrap.New(c)
	if err != nil {
		say("%v", err)
		return 126
	}
	defer w.Close()
	tag := func(what string) func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error {
				say("%s: %s", what, args[0])
				return next(ctx, args)
			}
		}
	}
	opts := []interp.RunnerOption{
		interp.StdIO(os.Stdin, os.Stdout, os.Stderr),
		interp.Env(expand.ListEnviron(os.Environ()...)),
		interp.ExecHandlers(tag("seen")),
	}
	opts = append(opts, w.RunnerOptions()...)
	opts = append(opts, interp.ExecHandlers(tag("next")))
	// Misuses a test asks for: the environment, or a call handler, given
	// after wrap's options, in place of wsh's.
	if os.Getenv("WRAPDEMO_ENV_AFTER") != "" {
		opts = append(opts, interp.Env(expand.ListEnviron(os.Environ()...)))
	}
	if os.Getenv("WRAPDEMO_CALL_AFTER") != "" {
		opts = append(opts, interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) { return args, nil }))
	}
	r, err := interp.New(opts...)
	if err != nil {
		say("%v", err)
		return 2
	}
	err = r.Run(context.Background(), f)
	st := w.Status()
	say("status: %s %s", st.Mode, st.Rung)
	var es interp.ExitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &es):
		return int(es)
	}
	say("%v", err)
	return 1
}
