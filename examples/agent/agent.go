// Command agent is how a program that runs shell commands for an AI agent
// embeds wsh: each tool call is a script with its own working directory,
// environment (which the model may have chosen), output buffers and
// deadline; calls run concurrently, each in a Runner of its own, and every
// external command runs in wsh's jail.
//
//	agent DIR SCRIPT...   run each SCRIPT as a tool call in DIR, four at a
//	                      time, and print what each said
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"mvdan.cc/sh/v3/interp"

	"wsh/jail"
	"wsh/shell"
)

// A call is one tool call: a script the model asked for.
type call struct {
	Script  string
	Dir     string
	Env     []string // the commands' environment, as the model gave it
	Timeout time.Duration
}

// A result is what the agent hands back to the model.
type result struct {
	Stdout, Stderr string
	Status         int // the exit status; -1 when the call timed out
	Err            error
	// InForce is what confined the call's commands (shell.Status).
	InForce shell.Status
}

// runCall runs one tool call in a Runner of its own. wsh's own notices go
// to notices, not to the call's stderr, which the model reads.
func runCall(ctx context.Context, c call, notices *lockedBuffer) result {
	var out, errb bytes.Buffer
	r, err := shell.New(shell.StdIO(nil, &out, &errb), shell.Dir(c.Dir), shell.Env(c.Env), shell.Warnings(notices))
	if err != nil {
		return result{Status: -1, Err: err}
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	err = r.Run(ctx, c.Script)
	res := result{Stdout: out.String(), Stderr: errb.String(), InForce: r.Status()}
	var es interp.ExitStatus
	switch {
	case err == nil:
	case errors.As(err, &es):
		res.Status = int(es)
	case ctx.Err() != nil:
		res.Status, res.Err = -1, ctx.Err()
	default:
		res.Status, res.Err = 1, err
	}
	return res
}

// runCalls runs calls, workers at a time, and returns their results in
// order.
func runCalls(ctx context.Context, calls []call, workers int, notices *lockedBuffer) []result {
	results := make([]result, len(calls))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				results[i] = runCall(ctx, calls[i], notices)
			}
		})
	}
	for i := range calls {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// lockedBuffer is a buffer that Runners of several goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func main() {
	jail.Init() // first: the jail's init is this program, re-executed
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: agent DIR SCRIPT...")
		os.Exit(2)
	}
	var calls []call
	for _, s := range os.Args[2:] {
		calls = append(calls, call{Script: s, Dir: os.Args[1], Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute})
	}
	var notices lockedBuffer
	for i, r := range runCalls(context.Background(), calls, 4, &notices) {
		fmt.Printf("call %d: status %d (%s)\n%s%s", i, r.Status, r.InForce.Mode, r.Stdout, r.Stderr)
		if r.Err != nil {
			fmt.Printf("error: %v\n", r.Err)
		}
	}
	os.Stderr.WriteString(notices.String())
}
