package wrap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"wsh/internal/proto"

	"mvdan.cc/sh/v3/interp"
)

// An Option configures a Wrapper.
type Option func(*settings) error

type settings struct {
	dir         string
	warn        io.Writer
	killTimeout time.Duration
	callHandler interp.CallHandlerFunc
}

// Dir sets the directory the commands start in, which is writable in the
// jail (with /tmp, $TMPDIR and the configuration's writable paths). The
// default is the process's working directory. Give the interpreter the
// same directory (interp.Dir).
func Dir(dir string) Option { return func(s *settings) error { s.dir = dir; return nil } }

// Warnings sets where wsh's own notices go: the one warning of a jail the
// host refused, and notes on the start directory and the home. The
// default is the process's stderr; nil discards.
func Warnings(w io.Writer) Option {
	return func(s *settings) error {
		if w == nil {
			w = io.Discard
		}
		s.warn = w
		return nil
	}
}

// KillTimeout sets how long a cancelled command has between SIGTERM and
// SIGKILL; the default is DefaultKillTimeout. It must not be negative.
func KillTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return fmt.Errorf("wrap.KillTimeout: %v is negative", d)
		}
		s.killTimeout = d
		return nil
	}
}

// CallHandler sets a call handler of the caller's own, which RunnerOptions
// puts before wsh's in the one call handler an interpreter has
// (mvdan.cc/sh keeps only the last interp.CallHandler given): it sees
// every simple command, builtins included, and may change its arguments
// or stop the script (interp.CallHandlerFunc). Do not give the
// interpreter an interp.CallHandler of your own after RunnerOptions: the
// script stops at its first command, saying so.
func CallHandler(f interp.CallHandlerFunc) Option {
	return func(s *settings) error {
		if f == nil {
			return errors.New("wrap.CallHandler: the handler is nil")
		}
		s.callHandler = f
		return nil
	}
}

// DefaultKillTimeout (2 s) is how long a cancelled command has between SIGTERM
// and SIGKILL.
const DefaultKillTimeout = proto.DefaultKillTimeout

func newSettings(opts []Option) (settings, error) {
	s := settings{warn: os.Stderr, killTimeout: DefaultKillTimeout}
	for _, o := range opts {
		if err := o(&s); err != nil {
			return s, err
		}
	}
	if s.dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return s, err
		}
		s.dir = d
	}
	return s, nil
}
