package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"mvdan.cc/sh/v3/syntax"

	"wsh/shell"
)

// interactive runs what is typed at a terminal, a statement at a time, as
// bash does: PS1 before each, PS2 while one goes on over lines; Ctrl-C at
// the prompt drops what was typed, and while a command runs goes to it
// (the prompt comes back; the shell goes on); exit or Ctrl-D ends it, with
// the status of the last command. Lines are edited by the terminal
// itself (erase, kill, word erase). Every external command runs in the
// jail, as always.
func interactive(r *shell.Runner, stdin io.Reader, stderr io.Writer) int {
	lr := newLineReader(stdin)
	var mu sync.Mutex
	var cancelRun context.CancelFunc // the Run under way, if one is
	sigs := make(chan os.Signal, 4)
	// SIGTERM is ignored, as by an interactive bash; SIGHUP ends wsh.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	hup := make(chan struct{})
	go func() {
		for sg := range sigs {
			switch {
			case sg == syscall.SIGHUP:
				// The terminal is gone: what runs stops, and wsh ends.
				close(hup)
				mu.Lock()
				if cancelRun != nil {
					cancelRun()
				}
				mu.Unlock()
				lr.drop()
				return
			case sg != syscall.SIGINT:
			case r.Interrupt():
				// the foreground command has it
			default:
				mu.Lock()
				if cancelRun != nil {
					cancelRun() // a script of builtins: it stops
				} else {
					lr.drop() // at the prompt: what was typed goes
				}
				mu.Unlock()
			}
		}
	}()
	status := 0
	for {
		p := syntax.NewParser()
		fmt.Fprint(stderr, prompt("PS1"))
		for stmts, err := range p.InteractiveSeq(lr) {
			if err != nil {
				if !errors.Is(err, errDropped) {
					fmt.Fprintf(stderr, "wsh: %v\n", err)
					status = 2
				} else {
					fmt.Fprintln(stderr)
				}
				break
			}
			if p.Incomplete() {
				fmt.Fprint(stderr, prompt("PS2"))
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			mu.Lock()
			cancelRun = cancel
			mu.Unlock()
			var stopped bool
			status, stopped = runStmts(ctx, r, stmts, stderr)
			mu.Lock()
			cancelRun = nil
			mu.Unlock()
			cancel()
			if r.Exited() && !stopped {
				return status // exit, or a fatal error
			}
			select {
			case <-hup:
				return 128 + int(syscall.SIGHUP)
			default:
			}
			fmt.Fprint(stderr, prompt("PS1"))
		}
		select {
		case <-hup:
			return 128 + int(syscall.SIGHUP)
		default:
		}
		if lr.atEOF() {
			fmt.Fprintln(stderr, "exit")
			return status
		}
	}
}

// runStmts runs what was typed and returns its status, and whether
// Ctrl-C stopped it (the shell goes on).
func runStmts(ctx context.Context, r *shell.Runner, stmts []*syntax.Stmt, stderr io.Writer) (int, bool) {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, &syntax.File{Stmts: stmts}); err != nil {
		fmt.Fprintf(stderr, "wsh: %v\n", err)
		return 2, false
	}
	err := r.Run(ctx, b.String())
	if errors.Is(err, shell.ErrInterrupted) || errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr)
		return 130, true
	}
	return exitCode(stderr, err), false
}

// prompt is PS1 or PS2 from the environment, with bash's \u, \h, \w,
// \W and \$ in it, or bash's default.
func prompt(name string) string {
	p, ok := os.LookupEnv(name)
	if !ok {
		p = map[string]string{"PS1": `\$ `, "PS2": "> "}[name]
	}
	dir, _ := os.Getwd()
	host, _ := os.Hostname()
	dollar := "$"
	if os.Geteuid() == 0 {
		dollar = "#"
	}
	return strings.NewReplacer(`\u`, os.Getenv("USER"), `\h`, strings.Split(host, ".")[0], `\w`, dir,
		`\W`, lastElem(dir), `\$`, dollar).Replace(p)
}

func lastElem(dir string) string {
	if i := strings.LastIndexByte(dir, '/'); i >= 0 && dir != "/" {
		return dir[i+1:]
	}
	return dir
}

// errDropped is a read that Ctrl-C at the prompt ended: the parser is
// made anew.
var errDropped = errors.New("dropped")

// A lineReader hands what is typed to a parser, from a goroutine that
// reads stdin, so that a read can be ended by drop.
type lineReader struct {
	chunks  chan []byte
	dropped chan struct{}
	pending []byte
	mu      sync.Mutex
	eof     bool
}

func newLineReader(in io.Reader) *lineReader {
	lr := &lineReader{chunks: make(chan []byte), dropped: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				lr.chunks <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(lr.chunks)
				return
			}
		}
	}()
	return lr
}

func (lr *lineReader) Read(p []byte) (int, error) {
	if len(lr.pending) > 0 {
		n := copy(p, lr.pending)
		lr.pending = lr.pending[n:]
		return n, nil
	}
	select {
	case b, ok := <-lr.chunks:
		if !ok {
			lr.mu.Lock()
			lr.eof = true
			lr.mu.Unlock()
			return 0, io.EOF
		}
		n := copy(p, b)
		lr.pending = b[n:]
		return n, nil
	case <-lr.dropped:
		lr.pending = nil
		return 0, errDropped
	}
}

// drop ends the read under way (or the next one).
func (lr *lineReader) drop() {
	select {
	case lr.dropped <- struct{}{}:
	default:
	}
}

func (lr *lineReader) atEOF() bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.eof
}
