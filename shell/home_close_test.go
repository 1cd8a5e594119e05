//go:build linux && cgo

package shell_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"wsh/shell"
)

// TestCloseWhileTheHomeIsUsed: a Runner closed while a background job of
// its script still writes to the copy-on-write home with the shell's own
// redirections neither races nor crashes. (The race it guards against
// shows with go test -race.)
func TestCloseWhileTheHomeIsUsed(t *testing.T) {
	home, err := os.MkdirTemp("/var/tmp", "wsh-shell-home-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(home)
	t.Setenv("HOME", home) // the jail's home is the process's, not Env's
	var stderr bytes.Buffer
	r, err := shell.New(shell.Dir(t.TempDir()), shell.StdIO(nil, &stderr, &stderr),
		shell.Env([]string{"PATH=/usr/bin:/bin", "HOME=" + home}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), `(i=0; while [ $i -lt 2000 ]; do echo $i > ~/bgfile; i=$((i+1)); done) &`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	r.Close()
	time.Sleep(200 * time.Millisecond) // the job goes on, against a closed Runner
}
