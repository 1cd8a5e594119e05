//go:build cgo

package seccomp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// gitChildEnv makes the test binary the child of TestGitGroupWithoutSupervisor.
const gitChildEnv = "WSH_SECCOMP_GIT_CHILD"

// TestGitGroupWithoutSupervisor: under the git config group, with its
// listener closed (wsh, the supervisor, gone), a rename fails with ENOSYS
// and does not happen: no rename goes through unjudged. Run in a child
// process, which the filter stays on.
func TestGitGroupWithoutSupervisor(t *testing.T) {
	if dir := os.Getenv(gitChildEnv); dir != "" {
		gitGroupChild(dir)
		return
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGitGroupWithoutSupervisor$")
	cmd.Env = append(os.Environ(), gitChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Errorf("the rename happened")
	}
}

// gitGroupChild loads the git config group alone, closes its listener,
// renames dir/a to dir/b, and exits 0 only on ENOSYS.
func gitGroupChild(dir string) {
	var skip []string
	for _, g := range policy {
		if g.Name != proto.GitGroup {
			skip = append(skip, g.Name)
		}
	}
	f, err := BuildFilter(skip...)
	if err == nil {
		err = f.Load()
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	fd, err := f.GetNotifFd()
	if err != nil {
		os.Stderr.WriteString("no listener: " + err.Error() + "\n")
		os.Exit(2)
	}
	unix.Close(int(fd))
	err = unix.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if !errors.Is(err, unix.ENOSYS) {
		os.Stderr.WriteString("rename: not ENOSYS: " + errString(err) + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
