package sweep

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// startSession starts a session: its leader, a sleep, and n jobs of a
// shell and a sleep each. It returns once all 2n+1 run.
func startSession(t *testing.T, n int) *exec.Cmd {
	t.Helper()
	script := fmt.Sprintf(`for i in $(seq %d); do sh -c 'sleep 100; :' & done; exec sleep 100`, n)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		Kill(cmd.Process.Pid, 5*time.Second) // its jobs too
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for len(Session(cmd.Process.Pid)) < 2*n+1 {
		if time.Now().After(deadline) {
			t.Fatalf("the session has %d processes, want %d", len(Session(cmd.Process.Pid)), 2*n+1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cmd
}

// TestKillTheSessionOnly: Kill ends every process of one session and
// nothing of another.
func TestKillTheSessionOnly(t *testing.T) {
	victim, bystander := startSession(t, 3), startSession(t, 2)
	if left := Kill(victim.Process.Pid, 5*time.Second); left != 0 {
		t.Fatalf("Kill left %d processes", left)
	}
	if n := len(Session(victim.Process.Pid)); n != 0 {
		t.Errorf("the swept session still has %d live processes", n)
	}
	if n := len(Session(bystander.Process.Pid)); n != 5 {
		t.Errorf("another session has %d live processes, want its 5", n)
	}
}

// TestKillEndsAForkLoop: a shell loop that forks and exits, in a process
// group of its own (set -m), each generation a new pid, is ended by one
// sweep, through its group, and its marker stops growing. (Without the
// group kill it ran on in some of 5 runs. A loop in C that forks at once
// can outrun every scan: see Kill.)
func TestKillEndsAForkLoop(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	loop := `g() { echo x >> ` + marker + `; (g &); }; g`
	script := "set -m; sh -c '" + loop + "' & exec sleep 100"
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		Kill(cmd.Process.Pid, 5*time.Second)
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for size(marker) < 100 {
		if time.Now().After(deadline) {
			t.Fatal("the loop did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if left := Kill(cmd.Process.Pid, 5*time.Second); left != 0 {
		t.Fatalf("Kill left %d processes", left)
	}
	before := size(marker)
	time.Sleep(300 * time.Millisecond)
	if after := size(marker); after != before {
		t.Fatalf("the loop ran on after the sweep: its marker grew from %d to %d bytes", before, after)
	}
}

func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
