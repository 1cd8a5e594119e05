//go:build linux && cgo

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// scriptCmds is the number of external commands in the script-level
// benchmarks.
const scriptCmds = 200

// BenchmarkScript is a script with a loop of 200 external commands
// (/bin/true), run start to end by a shell:
//
//	wsh-jail        wsh -c LOOP, every command in the jail
//	wsh-opted-out   the same with WSH_NO_SANDBOX=1
//	bash-bwrap      bash -c LOOP with bubblewrap around each command
//	bash-bare       bash -c LOOP, nothing around the commands
//
// ns/cmd is the time per command, the shell's own start included.
func BenchmarkScript(b *testing.B) {
	loopTrue := loopScript(scriptCmds, "/bin/true")
	b.Run("path=wsh-jail", func(b *testing.B) {
		runScript(b, nil, wshBin(b), "-c", loopTrue)
	})
	b.Run("path=wsh-opted-out", func(b *testing.B) {
		runScript(b, []string{"WSH_NO_SANDBOX=1"}, wshBin(b), "-c", loopTrue)
	})
	b.Run("path=bash-bwrap", func(b *testing.B) {
		bw := bwrapPath(b)
		runScript(b, nil, "/bin/bash", "-c", loopScript(scriptCmds, shellQuote(append([]string{bw}, bwrapArgs("/bin/true")...))))
	})
	b.Run("path=bash-bare", func(b *testing.B) {
		runScript(b, nil, "/bin/bash", "-c", loopTrue)
	})
}

func runScript(b *testing.B, extraEnv []string, argv ...string) {
	b.Helper()
	for b.Loop() {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(append([]string(nil), env...), extraEnv...)
		cmd.Dir = workDir
		cmd.Stdout = devNull
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			b.Fatalf("%q: %v\n%s", argv, err, errb.String())
		}
		if errb.Len() > 0 {
			b.Fatalf("%q wrote to stderr:\n%s", argv, errb.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*scriptCmds), "ns/cmd")
}

// shellQuote quotes argv for sh.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// shellFilesScript is 1,000 of the shell's own file accesses and no
// external command: 250 rounds of a write redirection, an append, a read
// redirection and a glob.
const shellFilesScript = `i=0; while [ $i -lt 250 ]; do echo $i > f.txt; echo $i >> f.txt; read l < f.txt; set -- /etc/pass*; i=$((i+1)); done`

// BenchmarkShellFiles is shellFilesScript run start to end by wsh -c, in
// a session and with a jail per command, paired against the same run of
// the wsh of BENCH_WSH_BASE (the commit before the shell's file access
// moved into the jail, built by make bench; left out when unset) and
// against bash -c. A-ns/op / 1000 is the time per access, wsh's start
// included.
func BenchmarkShellFiles(b *testing.B) {
	wsh := os.Getenv("BENCH_WSH_BIN")
	if wsh == "" {
		b.Skip("BENCH_WSH_BIN is not set: run make bench")
	}
	base := os.Getenv("BENCH_WSH_BASE")
	cmdOf := func(bin string, extra ...string) func() error {
		return func() error {
			c := exec.Command(bin, "-c", shellFilesScript)
			c.Env, c.Dir = append(append([]string(nil), env...), extra...), workDir
			c.Stdout = devNull
			var errb strings.Builder
			c.Stderr = &errb
			if err := c.Run(); err != nil || errb.Len() > 0 {
				return fmt.Errorf("%s: %v %s", bin, err, errb.String())
			}
			return nil
		}
	}
	runs := map[string]func() error{
		"wsh-session": cmdOf(wsh, "WSH_JAIL=session"),
		"wsh-command": cmdOf(wsh, "WSH_JAIL=command"),
		"bash":        cmdOf("/bin/bash"),
	}
	pairs := [][2]string{{"wsh-session", "bash"}}
	if base != "" {
		runs["base-session"] = cmdOf(base, "WSH_JAIL=session")
		runs["base-command"] = cmdOf(base, "WSH_JAIL=command")
		pairs = append(pairs, [2]string{"wsh-session", "base-session"}, [2]string{"wsh-command", "base-command"})
	}
	for _, pr := range pairs {
		b.Run("pair="+pr[0]+"-vs-"+pr[1], func(b *testing.B) {
			pairLoop(b, runs[pr[0]], runs[pr[1]], wallTime, "ns/op")
		})
	}
}
