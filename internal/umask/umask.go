//go:build linux && cgo

package umask

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/interp"
)

// Var holds the mask the script set with umask, as octal: a shell
// variable, so that a subshell's umask stays in the subshell and a
// function's does not (bash's scoping). It is not exported, and the
// core (execEnv) leaves it out of every command's environment even when
// the script exports it.
const Var = "__wsh_umask"

// Shell is the mask for the shell hc is of: the one its umask set, or
// this process's.
func Shell(hc interp.HandlerContext) (uint32, error) {
	if m, ok := Script(hc); ok {
		return m, nil
	}
	return process()
}

// Script is the mask the script set with umask, if it did.
func Script(hc interp.HandlerContext) (uint32, bool) {
	v := hc.Env.Get(Var)
	if !v.IsSet() {
		return 0, false
	}
	m, err := strconv.ParseUint(v.String(), 8, 32)
	if err != nil || m > 0o777 {
		return 0, false // the script changed it: not wsh's
	}
	return uint32(m), true
}

// mu is held while this process's umask is another than its own:
// the umask is the process's, for every thread, so whatever reads it or
// makes a file with it for a script waits.
var mu sync.Mutex

// Hold runs f with mu held: this process's own umask is in force
// while it runs (no fork of another shell's has it changed).
func Hold(f func()) {
	mu.Lock()
	defer mu.Unlock()
	f()
}

// With runs f, an unsandboxed command's fork (which does not wait
// for long), with this process's umask set to the one hc's script set, if
// it did. It holds mu in any case: another shell's fork or new file
// must not be made while one shell's mask is the process's.
func With(hc interp.HandlerContext, f func()) {
	mu.Lock()
	defer mu.Unlock()
	if m, ok := Script(hc); ok {
		old := syscall.Umask(int(m))
		defer syscall.Umask(old)
	}
	f()
}

// process is this process's umask, which a command's own jail
// inherits at its clone, and a session's command is given.
func process() (uint32, error) {
	mu.Lock()
	defer mu.Unlock()
	// The thread /proc/thread-self names at the open is the one read:
	// locked, no other goroutine can take it and end it between the
	// open and the read (ESRCH).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return 0, fmt.Errorf("the umask: %w", err)
	}
	if _, rest, ok := strings.Cut(string(b), "\nUmask:\t"); ok {
		if line, _, ok := strings.Cut(rest, "\n"); ok {
			if m, err := strconv.ParseUint(line, 8, 32); err == nil {
				return uint32(m), nil
			}
		}
	}
	return 0, fmt.Errorf("the umask: no Umask line in /proc/thread-self/status")
}
