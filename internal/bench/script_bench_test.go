//go:build linux && cgo

package bench

import (
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
