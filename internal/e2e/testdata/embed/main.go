// Command embed is a program that embeds wsh's library, for the e2e tests:
// it runs one script with shell.New in its working directory, after doing
// to its own process what an embedding program may do.
//
//	embed [-close-stdin] SCRIPT
//
// -close-stdin closes descriptor 0 before the Runner is made, so that the
// next descriptor the library opens gets number 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"mvdan.cc/sh/v3/interp"

	"wsh/jail"
	"wsh/shell"
)

func main() {
	jail.Init()
	closeStdin := flag.Bool("close-stdin", false, "close descriptor 0 first")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: embed [-close-stdin] SCRIPT")
		os.Exit(2)
	}
	if *closeStdin {
		os.Stdin.Close()
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(2)
	}
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(2)
	}
	defer r.Close()
	err = r.Run(context.Background(), flag.Arg(0))
	var st interp.ExitStatus
	switch {
	case err == nil:
	case errors.As(err, &st):
		r.Close()
		os.Exit(int(st))
	default:
		fmt.Fprintln(os.Stderr, "embed:", err)
		r.Close()
		os.Exit(1)
	}
}
