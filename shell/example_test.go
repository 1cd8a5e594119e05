//go:build linux && cgo

package shell_test

import (
	"context"
	"fmt"
	"os"

	"wsh/shell"
)

// A Runner runs a script; its external commands run in the jail, which
// the command reads back from the kernel.
func Example() {
	r, err := shell.New(shell.StdIO(nil, os.Stdout, os.Stderr), shell.Dir(os.TempDir()), shell.Env([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	err = r.Run(context.Background(), `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; ls /sys/class/net`)
	fmt.Println("error:", err)
	fmt.Println("in force:", r.Status().Mode)
	// Output:
	// NoNewPrivs:	1
	// Seccomp:	2
	// lo
	// error: <nil>
	// in force: confined
}
