package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/internal/job"
	"wsh/internal/proto"
	unsup "wsh/internal/unsupported"
)

// A Runner runs scripts; every external command runs in the jail.
type Runner struct {
	interp *interp.Runner
	engine engine
	name   string

	mu       sync.Mutex
	running  int  // Runs under way
	closed   bool // Close was called
	closeErr error
}

// ErrClosed is Run's error on a Runner that was closed.
var ErrClosed = errors.New("shell: the Runner is closed")

type settings struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string
	environ        []string
	cfg            *config.Config
	params         []string
	name           string
	killTimeout    time.Duration
	warnings       io.Writer // chosen by Warnings, or nil
	envGiven       bool      // Env was given
	callHandler    interp.CallHandlerFunc
}

// An Option configures a Runner.
type Option func(*settings) error

// StdIO sets the standard streams; the default is the process's own. The
// one warning of a refused jail goes to stderr. The file status flags of
// those that are an *os.File (O_NONBLOCK, O_APPEND, ...), as New finds
// them, are put back after each command and by Close.
func StdIO(in io.Reader, out, err io.Writer) Option {
	return func(s *settings) error {
		// nil discards, as in mvdan.cc/sh (nil stdin reads nothing).
		if out == nil {
			out = io.Discard
		}
		if err == nil {
			err = io.Discard
		}
		s.stdin, s.stdout, s.stderr = in, out, err
		return nil
	}
}

// Dir sets the starting directory, which is also writable in the jail. The
// default is the process's working directory.
func Dir(dir string) Option { return func(s *settings) error { s.dir = dir; return nil } }

// Env sets the commands' environment (KEY=VALUE pairs); without Env it is
// os.Environ(). Env(nil) is an error (a filter that returned nil would
// hand the process's whole environment to every command): give
// Env(os.Environ()) to inherit it. An environment without PATH gets
// DefaultPath, said once on the Runner's warnings. It is not wsh's
// configuration: WSH_* variables in it are
// plain variables to the commands, and wsh's own settings come from
// WithConfig or, without it, from the process's environment, so that the
// environment an agent passes on (with variables a model chose) cannot
// switch the jail off, and an operator's WSH_REQUIRE_SANDBOX holds. So do
// the paths the jail is made of: the TMPDIR that is writable, the HOME
// that is copy-on-write, wsh's state directory (XDG_STATE_HOME) are the
// process's, whatever Env says.
func Env(environ []string) Option {
	return func(s *settings) error {
		if environ == nil {
			return errors.New("shell.Env(nil): no environment; give Env(os.Environ()) to inherit the process's, or Env([]string{}) for none")
		}
		s.environ, s.envGiven = environ, true
		return nil
	}
}

// WithConfig sets the configuration; the default is config.Load of the
// process's environment (os.Environ, not Env). It is checked as Load
// checks the environment: an error is a *config.Error. It replaces the
// process's WSH_* settings whole, an operator's WSH_REQUIRE_SANDBOX=1
// included: to keep them, start from config.Load(os.Environ()) and change
// what you need.
func WithConfig(c config.Config) Option {
	return func(s *settings) error {
		if err := c.Validate(); err != nil {
			return err
		}
		s.cfg = &c
		return nil
	}
}

// Params sets shell options and positional parameters as `set` does, e.g.
// Params("-e", "-o", "pipefail", "--", "arg1").
func Params(args ...string) Option {
	return func(s *settings) error { s.params = append(s.params, args...); return nil }
}

// KillTimeout sets how long a cancelled command has between SIGTERM and
// SIGKILL; the default is DefaultKillTimeout. It must not be negative.
func KillTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return fmt.Errorf("shell.KillTimeout: %v is negative", d)
		}
		s.killTimeout = d
		return nil
	}
}

// Name sets $0; the default is "wsh".
func Name(name string) Option { return func(s *settings) error { s.name = name; return nil } }

// Warnings sets where wsh's own notices go: the one warning of a jail
// the host refused, and notes on the start directory and the home. The
// default is the Runner's stderr (StdIO), where the one warning is said
// once per process, however many Runners degrade; a writer given here
// gets it once per Runner. nil discards.
func Warnings(w io.Writer) Option {
	return func(s *settings) error {
		if w == nil {
			w = io.Discard
		}
		s.warnings = w
		return nil
	}
}

// CallHandler sets a handler that mvdan.cc/sh calls for every simple
// command, builtins included, with its arguments after expansion: it may
// return them changed, or an error that stops the script (see
// interp.CallHandlerFunc). It runs before wsh's exec middleware, so an
// external command it lets through, or names instead, still runs in the
// jail. It is the one handler of mvdan.cc/sh's that wsh lets a caller
// set: the others (open, stat, read-dir, access, exec) are what the jail
// and its policy are made of, so there is no option for them, and no way
// to reach the interpreter itself. It may be called concurrently (from
// the sides of a pipeline, from background jobs). Arguments it returns
// empty, without an error, are an error.
func CallHandler(f interp.CallHandlerFunc) Option {
	return func(s *settings) error {
		if f == nil {
			return errors.New("shell.CallHandler: the handler is nil")
		}
		s.callHandler = func(ctx context.Context, args []string) ([]string, error) {
			out, err := f(ctx, args)
			if err == nil && len(out) == 0 {
				// mvdan.cc/sh reads out[0]: an empty list would panic.
				err = fmt.Errorf("shell.CallHandler returned no arguments for %q", args[0])
			}
			return out, err
		}
		return nil
	}
}

// New makes a Runner. A configuration error is a *config.Error; a jail
// that cannot be made, for a reason other than the host refusing it, is a
// *JailError; where wsh has no jail (not Linux, or built without cgo) and
// WSH_REQUIRE_SANDBOX is set, an error that is ErrNotSupported. A program
// that did not call jail.Init first gets ErrNoInit.
func New(opts ...Option) (*Runner, error) {
	s := settings{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, name: "wsh", killTimeout: DefaultKillTimeout}
	for _, o := range opts {
		if err := o(&s); err != nil {
			return nil, err
		}
	}
	if err := s.defaults(); err != nil {
		return nil, err
	}
	e, err := newEngine(&s)
	if err != nil {
		return nil, err
	}
	ir, err := e.newInterp(s.environ, s.params, interp.StdIO(s.stdin, s.stdout, s.stderr), interp.Dir(s.dir))
	if err != nil {
		e.close()
		return nil, err
	}
	return &Runner{interp: ir, engine: e, name: s.name}, nil
}

func (s *settings) defaults() error {
	if !s.envGiven {
		s.environ = os.Environ()
	}
	if !slices.ContainsFunc(s.environ, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		fmt.Fprintf(s.warnTo(), "wsh: the commands' environment has no PATH: they get PATH=%s\n", DefaultPath)
		s.environ = append(slices.Clip(s.environ), "PATH="+DefaultPath)
	}
	if s.dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return err
		}
		s.dir = d
	}
	if s.cfg == nil {
		c, err := config.Load(os.Environ())
		if err != nil {
			return err
		}
		s.cfg = &c
	}
	return nil
}

// Run parses and runs script. A parse error is a syntax.ParseError (wsh
// exits 2 on it); a command's status is an interp.ExitStatus.
func (r *Runner) Run(ctx context.Context, script string) error {
	return r.RunReader(ctx, strings.NewReader(script), "")
}

// RunReader parses the script read from rd, naming it name in errors (and
// in $0 when Name was not given), and runs it. A script with a construct
// that mvdan.cc/sh would run to a wrong result without an error (listed
// in the README's known differences) is not run: its error is a
// syntax.ParseError naming the construct, as a parse error is.
func (r *Runner) RunReader(ctx context.Context, rd io.Reader, name string) error {
	file, err := syntax.NewParser().Parse(rd, name)
	if err != nil {
		return err
	}
	if err := unsup.Check(file); err != nil {
		return err // a construct mvdan.cc/sh would run wrong, silently
	}
	file.Name = r.name // $0
	r.mu.Lock()
	if r.closed {
		// The interpreter's own directory is gone: a Run now would have
		// it make its FIFOs where another process may have put one of
		// the same name.
		r.mu.Unlock()
		return ErrClosed
	}
	if r.running > 0 {
		r.mu.Unlock()
		return ErrBusy
	}
	r.running++
	r.mu.Unlock()
	defer r.endRun()
	job.Mark(file)
	ctx, end := r.engine.startRun(ctx)
	err = end(r.interp.Run(ctx, file))
	if errors.Is(err, proto.ErrInterrupted) {
		return interruptedError{}
	}
	if err == nil && ctx.Err() != nil {
		// The context ended the script (in wait, say), which
		// mvdan.cc/sh gives as status 0.
		return ctx.Err()
	}
	return err
}

// ErrInterrupted is Run's error when Interrupt ended the script: its
// foreground command died of the SIGINT. It is also an
// interp.ExitStatus(130) (errors.As), bash's status for it.
var ErrInterrupted = proto.ErrInterrupted

type interruptedError struct{}

func (interruptedError) Error() string { return "interrupted" }

func (interruptedError) Is(target error) bool { return target == ErrInterrupted }

func (interruptedError) As(target any) bool {
	if es, ok := target.(*interp.ExitStatus); ok {
		*es = 130
		return true
	}
	return false
}

// Interrupt does what a terminal's Ctrl-C does to the script a Run is
// running: it sends SIGINT to the process group of each external command
// of the foreground running now (not to those of background jobs, which
// bash starts with SIGINT ignored), and reports whether there was one. As
// in bash, a script whose foreground command died of it ends, and Run
// returns ErrInterrupted; one whose command handled it and exited goes
// on. With no command running it does nothing and returns false: a caller
// that wants the script to stop then cancels the Run's context, as bash
// stops on a SIGINT between commands. Where wsh has no jail (not Linux,
// no cgo), it has no way to reach the commands, and returns false.
func (r *Runner) Interrupt() bool { return r.engine.interrupt() }

func (r *Runner) endRun() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running--; r.running == 0 && r.closed {
		r.closeErr = r.engine.close()
	}
}

// Close ends the Runner: it restores terminals, releases the jail's home
// and removes wsh's temporary files. A Run under way (on another
// goroutine) ends first, as it would have; Close then takes effect when
// the last one returns. Later Runs return ErrClosed. Commands a script
// left running in the background are not waited for.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.closeErr
	}
	r.closed = true
	if r.running == 0 {
		r.closeErr = r.engine.close()
	}
	return r.closeErr
}

// Exited reports whether the last Run ended with the exit builtin.
func (r *Runner) Exited() bool { return r.interp.Exited() }

// Status says what is in force for the Runner's external commands now.
func (r *Runner) Status() Status { return r.engine.status() }

// Writable returns the paths that are writable in the jail.
func (r *Runner) Writable() []string { return r.engine.writable() }

// A Blocked is a host and port that wsh's proxy refused a command
// (WSH_NETWORK=proxy or none), why, and how many times.
type Blocked struct {
	Host   string
	Port   uint16
	Reason string
	Count  int
}

// Blocked returns the hosts wsh's proxy refused the Runner's commands so
// far, in the order of their first refusal. Each was said once, when
// first refused, on the Runner's warnings (stderr by default).
func (r *Runner) Blocked() []Blocked { return r.engine.blocked() }

// ErrBusy is Run's error while another Run of the same Runner is under
// way: a Runner runs one script at a time (two in one interpreter would
// change each other's variables). Nothing of the second script runs.
var ErrBusy = errors.New("shell: a Run of this Runner is under way: one at a time")

// DefaultPath is the commands' PATH when the environment given with Env
// has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
