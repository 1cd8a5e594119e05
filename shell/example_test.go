package shell_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/config"
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
	_, degraded := r.Degraded()
	fmt.Println("degraded:", degraded)
	// Output:
	// NoNewPrivs:	1
	// Seccomp:	2
	// lo
	// error: <nil>
	// degraded: false
}

// A Jailer makes an interp.Runner of your own whose external commands run
// in the jail and whose redirections obey the jail's rules.
func ExampleJailer_NewInterp() {
	environ := []string{"PATH=/usr/bin:/bin"}
	cfg, err := config.Load(environ)
	if err != nil {
		fmt.Println(err)
		return
	}
	j, err := shell.NewJailer(cfg, os.TempDir(), environ, os.Stderr)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	r, err := j.NewInterp(environ, nil, interp.StdIO(nil, os.Stdout, os.Stdout), interp.Dir(os.TempDir()))
	if err != nil {
		fmt.Println(err)
		return
	}
	file, _ := syntax.NewParser().Parse(strings.NewReader(`head -c 13 /proc/1/cmdline; echo; echo x > /etc/wsh-example; sh -c 'exit 3'`), "")
	err = r.Run(context.Background(), file)
	fmt.Println("error:", err)
	// Output:
	// wsh-jail-init
	// wsh: /etc/wsh-example: Read-only file system
	// error: exit status 3
}
