//go:build linux && cgo

package bench

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkMemory starts `wsh -c 'sleep 60'` and, once the sleep runs,
// reads the resident memory of wsh, of the jail init and of the sleep from
// the host's /proc (kB). VmHWM is the peak; Pss shares the pages of the
// binary that wsh and its init both map. ns/op is the time from starting
// wsh to the sleep running. Run it with -benchtime=1x.
//
//	wsh-jail        the jail in full mode
//	wsh-opted-out   WSH_NO_SANDBOX=1: there is no init
func BenchmarkMemory(b *testing.B) {
	b.Run("path=wsh-jail", func(b *testing.B) { memory(b, nil) })
	b.Run("path=wsh-opted-out", func(b *testing.B) { memory(b, []string{"WSH_NO_SANDBOX=1"}) })
}

func memory(b *testing.B, extraEnv []string) {
	bin := wshBin(b)
	metrics := map[string]float64{}
	for b.Loop() {
		cmd := exec.Command(bin, "-c", "/bin/sleep 60")
		cmd.Env = append(append([]string(nil), env...), extraEnv...)
		cmd.Dir = workDir
		cmd.Stdout, cmd.Stderr = devNull, devNull
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		wsh := cmd.Process.Pid
		var init, sleep int
		deadline := time.Now().Add(10 * time.Second)
		for sleep == 0 && time.Now().Before(deadline) {
			init, sleep = findSleep(wsh)
			if sleep == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		if sleep == 0 {
			cmd.Process.Kill()
			cmd.Wait()
			b.Fatal("the sleep did not start in 10s")
		}
		b.StopTimer()
		read := func(who string, pid int) {
			for _, f := range []string{"VmRSS", "VmHWM"} {
				metrics[who+"-"+f+"-kB"] = kB(statusField(strconv.Itoa(pid), f))
			}
			metrics[who+"-Pss-kB"] = pss(pid)
		}
		read("wsh", wsh)
		if init != 0 {
			read("init", init)
		}
		read("target", sleep)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		b.StartTimer()
	}
	for k, v := range metrics {
		b.ReportMetric(v, k)
	}
}

// findSleep returns the jail init under wsh (0 when opted out) and the
// sleep, once it runs (0 before).
func findSleep(wsh int) (init, sleep int) {
	for _, c := range childrenOf(wsh) {
		if len(c.args) == 0 {
			continue
		}
		switch {
		case c.args[0] == "wsh-jail-init":
			for _, t := range childrenOf(c.pid) {
				if len(t.args) > 0 && t.args[0] == "/bin/sleep" {
					return c.pid, t.pid
				}
			}
		case c.args[0] == "/bin/sleep":
			return 0, c.pid
		}
	}
	return 0, 0
}

// kB parses a /proc status value such as "1234 kB".
func kB(v string) float64 {
	n, _ := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64)
	return n
}

// pss returns the proportional set size of pid from smaps_rollup.
func pss(pid int) float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			return kB(strings.TrimSpace(v))
		}
	}
	return 0
}
