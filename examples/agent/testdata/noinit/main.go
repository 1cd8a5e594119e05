// Command noinit is an embedder that forgot jail.Init: it makes a Runner
// and prints how long New took, its error, and how many child processes
// it has then.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"wsh/shell"
)

func main() {
	start := time.Now()
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr))
	took := time.Since(start)
	if err == nil {
		r.Run(context.Background(), "/bin/true")
		r.Close()
	}
	fmt.Printf("took %dms\nerror: %v\nchildren: %d\n", took.Milliseconds(), err, children())
}

// children counts this process's children, from every thread's list.
func children() int {
	n := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		n += len(strings.Fields(string(b)))
	}
	return n
}
