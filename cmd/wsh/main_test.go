//go:build linux && cgo

package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"wsh/jail"
)

func TestMain(m *testing.M) {
	// First: every jailed command re-executes this test binary as the jail
	// init (argv[0] "wsh-jail-init"), which testscript would not recognise.
	jail.Init()
	testscript.Main(m, map[string]func(){
		"wsh": main,
	})
}

var update = flag.Bool("u", false, "update testscript output files")

func TestScript(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": cmdExits},
	})
}

// cmdExits runs a program and checks its exit status, which exec cannot:
//
//	exits 127 wsh nosuchfile
//
// Its standard output and error are then checked with stdout and stderr.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	got := 0
	var ee *exec.ExitError
	switch err := ts.Exec(args[1], args[2:]...); {
	case errors.As(err, &ee):
		got = ee.ExitCode() // -1 when killed by a signal
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// wshCommand runs this test binary as wsh, as testscript.Main dispatches
// on argv[0].
func wshCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Args[0] = "wsh"
	return cmd
}
