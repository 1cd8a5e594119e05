package initsys

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// forwarded are the signals the reaper passes on to the target.
var forwarded = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT}

// ForwardedSignals are those of forwarded that the init did not inherit
// ignored: wsh passes SIGHUP and SIGINT on ignored when they are ignored in
// wsh (nohup), and then the target inherits them ignored too.
func ForwardedSignals() []os.Signal {
	var out []os.Signal
	for _, s := range forwarded {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// DroppedSignals are the signals on which Go ends a program that has not
// asked for them (os/signal, "Default behavior of signals in Go
// programs"): the fault signals and SIGABRT. A target could send them to
// its PID 1 (kill -SEGV 1) and end its own init with a stack dump; the
// init catches and drops them. It leaves the others to Go, which catches
// and ignores them, or (SIGTSTP, SIGTTIN, SIGTTOU) leaves them at the
// default, which PID 1 does not get from its own namespace. Each costs the
// init a round trip to os/signal's thread at start, so the list is no
// longer than it needs to be.
var DroppedSignals = func() []os.Signal {
	out := []os.Signal{unix.SIGABRT}
	for _, s := range proto.FaultSignals {
		out = append(out, s)
	}
	return out
}()
