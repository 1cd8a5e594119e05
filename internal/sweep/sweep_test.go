package sweep

import (
	"fmt"
	"os/exec"
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
	if left := Kill(victim.Process.Pid, nil, 5*time.Second); left != 0 {
		t.Fatalf("Kill left %d processes", left)
	}
	if n := len(Session(victim.Process.Pid)); n != 0 {
		t.Errorf("the swept session still has %d live processes", n)
	}
	if n := len(Session(bystander.Process.Pid)); n != 5 {
		t.Errorf("another session has %d live processes, want its 5", n)
	}
}

// TestKillSpares: what spared spares (here the leader) is left running,
// and the rest of its session is killed.
func TestKillSpares(t *testing.T) {
	s := startSession(t, 2)
	leader := s.Process.Pid
	Kill(leader, func(pid int, ps map[int]Proc) bool { return pid == leader }, 5*time.Second)
	ps := Session(leader)
	if _, ok := ps[leader]; !ok || len(ps) != 1 {
		t.Errorf("after a sweep that spares the leader, the session has %v, want the leader alone", ps)
	}
}
