package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/term"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
	"wsh/internal/proto"
	"wsh/shell"
)

const usage = `usage: wsh [-aefnux] [-o OPTION] -c SCRIPT [NAME [ARG...]]
       wsh [-aefnux] [-o OPTION] FILE [ARG...]
       wsh [-aefnux] [-o OPTION]            (the script comes from standard input)
       wsh [-aefnux] [-o OPTION] [-i]       (interactive, on a terminal)
       wsh --help | --version
       wsh version [--json]
       wsh doctor [--json]
       wsh home [reset]`

// optionNames are the names -o takes: bash's that mvdan.cc/sh has (set -o
// takes the same).
var optionNames = []string{"allexport", "errexit", "noexec", "noglob", "nounset", "pipefail", "xtrace"}

// invocation is what the command line asked for.
type invocation struct {
	opts        []string // for shell.Params: -e, +u, -o pipefail, ...
	command     bool     // -c
	interactive bool     // -i
	operands    []string
}

// parseArgs reads sh's options up to the first operand.
func parseArgs(args []string) (*invocation, error) {
	inv := &invocation{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			inv.operands = args[i+1:]
			return inv, nil
		case strings.HasPrefix(a, "--"):
			return nil, fmt.Errorf("%s: invalid option", a)
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					inv.command = true
				case c == 'o':
					// As in bash, o takes the next argument even at
					// the end of a group: -eo pipefail.
					if i+1 >= len(args) {
						return nil, fmt.Errorf("%co: option requires an argument", a[0])
					}
					i++
					if !slices.Contains(optionNames, args[i]) {
						return nil, fmt.Errorf("%co %s: invalid option name; wsh knows %s", a[0], args[i], strings.Join(optionNames, ", "))
					}
					inv.opts = append(inv.opts, string(a[0])+"o", args[i])
				case strings.ContainsRune("aefnux", c):
					inv.opts = append(inv.opts, string(a[0])+string(c))
				case c == 'l' && a[0] == '-':
					return nil, errors.New("-l: login shells are not supported: wsh reads no startup files (/etc/profile, ~/.profile)")
				case c == 'i' && a[0] == '-':
					inv.interactive = true
				default:
					return nil, fmt.Errorf("%c%c: invalid option", a[0], c)
				}
			}
		default:
			inv.operands = args[i:]
			return inv, nil
		}
	}
	return inv, nil
}

// Main runs wsh with args (without argv[0]) and returns the exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	status, _ := run(args, stdin, stdout, stderr)
	return status
}

// run is Main, and the signal that wsh is to die of, as bash dies of
// the SIGINT that ended its script (so that a shell that runs wsh stops
// its own script too), if any.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, syscall.Signal) {
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "wsh: %s %s: unknown argument\n%s\n", args[0], args[1], usage)
			return 2, 0
		}
		fmt.Fprintln(stdout, help)
		return 0, 0
	}
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		return printVersion(args[1:], stdout, stderr), 0
	}
	if len(args) > 0 && args[0] == "doctor" {
		return doctor(args[1:], stdout, stderr), 0
	}
	if len(args) > 0 && args[0] == "home" {
		return home(args[1:], stdout, stderr), 0
	}
	inv, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "wsh: %v\n%s\n", err, usage)
		return 2, 0
	}
	if inv.command && len(inv.operands) == 0 {
		fmt.Fprintf(stderr, "wsh: -c: option requires an argument\n%s\n", usage)
		return 2, 0
	}
	if !inv.command && len(inv.operands) == 0 && (inv.interactive || isTerminal(stdin)) {
		return runInteractive(inv, stdin, stdout, stderr), 0
	}
	script, name, params, serr := source(inv, stdin)
	if serr != nil {
		fmt.Fprintf(stderr, "wsh: %v\n", serr)
		return serr.status, 0
	}
	defer script.Close()
	opts := append(inv.opts, "--")
	r, err := shell.New(
		shell.StdIO(stdin, stdout, stderr),
		shell.Params(append(opts, params...)...),
		shell.Name(name.dollar0),
	)
	if err != nil {
		return configError(stderr, err), 0
	}
	defer r.Close()
	ctx, sig := signalContext(r.Interrupt)
	defer sig.stop()
	err = r.RunReader(ctx, script, name.file)
	st := status(stderr, err, sig)
	if sg := sig.received(); sg != 0 {
		return st, sg
	}
	if errors.Is(err, shell.ErrInterrupted) {
		return st, syscall.SIGINT
	}
	return st, 0
}

// runInteractive makes the Runner of an interactive wsh and runs it.
func runInteractive(inv *invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	r, err := shell.New(
		shell.StdIO(stdin, stdout, stderr),
		shell.Params(append(inv.opts, "--")...),
		shell.Name("wsh"),
	)
	if err != nil {
		return configError(stderr, err)
	}
	defer r.Close()
	return interactive(r, stdin, stderr)
}

// isTerminal says whether in is a terminal: wsh with no script reads
// one typed there.
func isTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

type scriptName struct{ file, dollar0 string }

// source opens the script the invocation names.
func source(inv *invocation, stdin io.Reader) (io.ReadCloser, scriptName, []string, *scriptError) {
	ops := inv.operands
	switch {
	case inv.command:
		name := scriptName{"-c", "wsh"}
		if len(ops) > 1 {
			name.dollar0 = ops[1]
			return io.NopCloser(strings.NewReader(ops[0])), name, ops[2:], nil
		}
		return io.NopCloser(strings.NewReader(ops[0])), name, nil, nil
	case len(ops) > 0:
		b, err := readScript(ops[0])
		if err != nil {
			return nil, scriptName{}, nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), scriptName{ops[0], ops[0]}, ops[1:], nil
	}
	return io.NopCloser(stdin), scriptName{"<stdin>", "wsh"}, nil, nil
}

// A scriptError is a script file that cannot be run, with bash's status.
type scriptError struct {
	status int
	msg    string
}

func (e *scriptError) Error() string { return e.msg }

// readScript reads a script file as bash opens one: one that does not
// exist is 127; one that cannot be read (a directory, say) or whose first
// line holds a NUL byte is 126.
func readScript(path string) ([]byte, *scriptError) {
	b, err := os.ReadFile(path)
	if err != nil {
		status := 126
		if errors.Is(err, fs.ErrNotExist) {
			status = 127
		}
		return nil, &scriptError{status, path + ": " + capitalize(unwrapPath(err).Error())}
	}
	if line, _, _ := bytes.Cut(b, []byte("\n")); bytes.IndexByte(line, 0) >= 0 {
		return nil, &scriptError{126, path + ": cannot execute binary file"}
	}
	return b, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// capitalize writes an errno's text as bash does: "No such file or
// directory".
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func configError(stderr io.Writer, err error) int {
	if _, ok := errors.AsType[*config.GroundError](err); ok {
		// No command may run there: a jail that cannot be made.
		fmt.Fprintf(stderr, "wsh: %v\n", err)
		return 126
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		fmt.Fprintf(stderr, "wsh: configuration: %v\n", err)
		return 2
	}
	if _, ok := errors.AsType[*shell.JailError](err); ok {
		// No command can get a jail: none runs, as a refused command's
		// status says.
		fmt.Fprintf(stderr, "wsh: %v; run 'wsh doctor'\n", err)
		return 126
	}
	fmt.Fprintf(stderr, "wsh: %v\n", err)
	return 1
}

// status turns what Run returned into wsh's exit status.
func status(stderr io.Writer, err error, sig *signalCtx) int {
	if s := sig.received(); s != 0 {
		return proto.SignalStatus(s)
	}
	return exitCode(stderr, err)
}

// exitCode is the status of what a Run returned: its exit status (130 for
// shell.ErrInterrupted), 2 for a parse error, 1 for any other error; an
// error is said on stderr.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(es)
	}
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		fmt.Fprintf(stderr, "wsh: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "wsh: %v\n", err)
	return 1
}

// signalCtx is wsh's part in the signals a shell gets. SIGINT (a
// terminal's Ctrl-C) goes on to the foreground command as SIGINT
// (shell.Runner.Interrupt), and the script ends or goes on by bash's rule;
// with no command running, it stops the script. SIGTERM and SIGHUP stop
// the script and its commands (jailed ones get SIGTERM, then SIGKILL),
// and wsh dies of the signal. A SIGINT that wsh was started with ignored
// (a background job of a shell script) stays ignored, in wsh and in its
// commands, as in a shell; so does SIGHUP (nohup).
type signalCtx struct {
	ch     chan os.Signal
	cancel context.CancelFunc
	got    chan syscall.Signal
}

func signalContext(interrupt func() bool) (context.Context, *signalCtx) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &signalCtx{ch: make(chan os.Signal, 4), cancel: cancel, got: make(chan syscall.Signal, 1)}
	sigs := []os.Signal{syscall.SIGTERM}
	for _, sg := range []os.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(sg) {
			sigs = append(sigs, sg)
		}
	}
	signal.Notify(s.ch, sigs...)
	go func() {
		for sg := range s.ch {
			if sg == syscall.SIGINT && interrupt() {
				continue // the foreground command has it
			}
			select {
			case s.got <- sg.(syscall.Signal):
			default: // the first one is what wsh dies of
			}
			cancel()
		}
	}()
	return ctx, s
}

// received is the signal that stopped the script, if one did.
func (s *signalCtx) received() syscall.Signal {
	select {
	case sg := <-s.got:
		s.got <- sg
		return sg
	default:
		return 0
	}
}

func (s *signalCtx) stop() {
	signal.Stop(s.ch)
	s.cancel()
}
