//go:build linux && cgo

package shell_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/interp"

	"wsh/shell"
)

// TestInterrupt is Runner.Interrupt as an embedder calls it (an agent
// passing on its user's Ctrl-C): with no command running it does nothing;
// a foreground command that dies of the SIGINT ends the script, and Run
// returns ErrInterrupted, which is also exit status 130; one that handles
// it lets the script go on, and the Runner serves the next Run.
func TestInterrupt(t *testing.T) {
	var out, errb strings.Builder
	r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(t.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Interrupt() {
		t.Error("Interrupt with no command running said it reached one")
	}
	interrupt := func(script, token string) error {
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background(), script) }()
		waitFor(t, func() bool { return len(procsWith(token)) > 0 }, "the jailed sleep to start")
		time.Sleep(100 * time.Millisecond) // the shell's trap is set before its sleep starts
		if !r.Interrupt() {
			t.Error("Interrupt did not reach the running command")
		}
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10s of the interrupt")
			return nil
		}
	}
	err = interrupt("sleep 301.75; echo never", "301.75")
	var es interp.ExitStatus
	if !errors.Is(err, shell.ErrInterrupted) || !errors.As(err, &es) || es != 130 || strings.Contains(out.String(), "never") {
		t.Errorf("Run = %v (status %d), stdout %q: want ErrInterrupted, 130, and the script ended", err, es, out.String())
	}
	out.Reset()
	err = interrupt(`sh -c 'trap "echo handled; exit 3" INT; sleep 301.8 & wait'; echo went-on $?`, "301.8")
	if err != nil || out.String() != "handled\nwent-on 3\n" {
		t.Errorf("Run = %v, stdout %q; want nil and the script going on", err, out.String())
	}
	waitFor(t, func() bool { return len(procsWith("301.")) == 0 }, "every process of the jail to be gone")
}
