// Command noinit is a program that embeds wsh's library and forgot to
// call jail.Init, for the e2e tests: it runs its argument with shell.New
// in its working directory.
package main

import (
	"context"
	"fmt"
	"os"

	"wsh/shell"
)

func main() {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "noinit:", err)
		os.Exit(2)
	}
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "noinit:", err)
		os.Exit(2)
	}
	defer r.Close()
	if err := r.Run(context.Background(), os.Args[len(os.Args)-1]); err != nil {
		fmt.Fprintln(os.Stderr, "noinit:", err)
		os.Exit(1)
	}
}
