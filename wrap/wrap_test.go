//go:build linux && cgo

package wrap_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/wrap"
)

// TestDefaultEnvironment: an interpreter given no interp.Env has the
// process's environment, as mvdan.cc/sh gives it, with wrap's options
// too.
func TestDefaultEnvironment(t *testing.T) {
	w, err := wrap.New(config.Config{}, wrap.Dir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out strings.Builder
	r, err := interp.New(append([]interp.RunnerOption{interp.StdIO(nil, &out, &out)}, w.RunnerOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := syntax.NewParser().Parse(strings.NewReader(`echo "$PATH"; env true; echo $?`), "")
	if err := r.Run(context.Background(), f); err != nil || out.String() != os.Getenv("PATH")+"\n0\n" {
		t.Errorf("Run: %v, output %q", err, out.String())
	}
}

// TestCloseTwice: a second Close returns what the first did, at once.
func TestCloseTwice(t *testing.T) {
	w, err := wrap.New(config.Config{}, wrap.Dir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	first := w.Close()
	done := make(chan error, 1)
	go func() { done <- w.Close() }()
	select {
	case err := <-done:
		if err != first {
			t.Errorf("second Close: %v, first: %v", err, first)
		}
	case <-time.After(time.Minute):
		t.Fatal("a second Close did not return")
	}
}
