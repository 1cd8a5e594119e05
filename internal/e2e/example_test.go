//go:build linux && cgo

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// The first way in: wsh -c, as a person or a program that starts one shell
// per call runs it. The command reads its confinement back from the
// kernel; what is in force is said only when it is not the full jail.
func Example_wshC() {
	cmd := exec.Command(wshBin, "-c", `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; ls /sys/class/net`)
	cmd.Dir = os.TempDir()
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + os.TempDir()}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	fmt.Print(string(out))
	fmt.Printf("error: %v, stderr: %q\n", err, stderr.String())
	// Output:
	// NoNewPrivs:	1
	// Seccomp:	2
	// lo
	// error: <nil>, stderr: ""
}
