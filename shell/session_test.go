//go:build linux && cgo

package shell_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wsh/config"
	"wsh/shell"
)

// sleepers returns the pids of the host's processes that run sleep with
// the argument arg.
func sleepers(arg string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == "sleep\x00"+arg+"\x00" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// lockedBuffer is a bytes.Buffer that goroutines may write while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestCloseEndsTheSession: a Runner's Close ends every process its
// session's jail holds, a background job included, while the embedding
// program goes on. With a jail per command, a background job outlives
// Close (as before), until its own end.
func TestCloseEndsTheSession(t *testing.T) {
	for _, mode := range []config.JailMode{config.JailSession, config.JailCommand} {
		t.Run(string(mode), func(t *testing.T) {
			arg := fmt.Sprintf("%d.%d", 500+len(mode), time.Now().UnixNano()%1000000)
			t.Cleanup(func() {
				for _, p := range sleepers(arg) {
					t.Logf("killing what is left: %s", p)
					var pid int
					fmt.Sscan(p, &pid)
					if proc, err := os.FindProcess(pid); err == nil {
						proc.Kill()
					}
				}
			})
			// The background job's stderr is copied while the test reads it.
			var stderr lockedBuffer
			r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(nil, &stderr, &stderr),
				shell.WithConfig(config.Config{RequireSandbox: config.FloorFull, Jail: mode}),
				shell.Env([]string{"PATH=/usr/bin:/bin"}))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Run(context.Background(), "sleep "+arg+" &"); err != nil {
				t.Fatal(err)
			}
			if !waitUntil(10*time.Second, func() bool { return len(sleepers(arg)) == 1 }) {
				t.Fatalf("the background sleep did not start: %s", stderr.String())
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			gone := waitUntil(2*time.Second, func() bool { return len(sleepers(arg)) == 0 })
			if mode == config.JailSession && !gone {
				t.Errorf("2 s after Close, the session's background job still runs")
			}
			if mode == config.JailCommand && gone {
				t.Errorf("a jail of its own ended at Close: the control does not hold")
			}
			if strings.Contains(stderr.String(), "wsh:") {
				t.Errorf("stderr: %s", stderr.String())
			}
		})
	}
}
