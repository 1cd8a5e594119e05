package resolve

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterEnv, set, has TestMain load a seccomp filter that answers openat2
// with the errno it names before the tests run.
const filterEnv = "WSH_RESOLVE_TEST_REFUSE_OPENAT2"

func TestMain(m *testing.M) {
	if v := os.Getenv(filterEnv); v != "" {
		errno, err := strconv.Atoi(v)
		if err == nil {
			err = refuseOpenat2(unix.Errno(errno))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loading the filter:", err)
			os.Exit(3)
		}
	}
	os.Exit(m.Run())
}

// TestOpenRefused runs every case through Open in a test binary whose
// seccomp filter refuses openat2 (ENOSYS as wsh's jail does, and EPERM
// as some container profiles did): Open gives what the walk gives.
func TestOpenRefused(t *testing.T) {
	v := os.Getenv(filterEnv)
	if v == "" {
		for _, errno := range []unix.Errno{unix.ENOSYS, unix.EPERM} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenRefused$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), filterEnv+"="+strconv.Itoa(int(errno)))
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestOpenRefused") {
				t.Errorf("under a filter that says %v to openat2: %v\n%s", errno, err, out)
			}
		}
		return
	}
	n, _ := strconv.Atoi(v)
	if _, err := openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC}); err != unix.Errno(n) {
		t.Fatalf("openat2 under the filter: %v, not %v", err, unix.Errno(n))
	}
	if refused.Load() {
		t.Fatal("Open remembers a refusal before any was met")
	}
	for _, c := range walkCases {
		want := c.want
		if c.walk != "" {
			want = c.walk
		}
		if got := openIn(t, c, Open); got != want {
			t.Errorf("%s (flags %#x, resolve %#x): Open gave %q, want %q", c.path, c.flags, c.resolve, got, want)
		}
	}
	if !refused.Load() {
		t.Error("Open did not remember that openat2 is refused")
	}
}

// TestOpenFileEPERM: an EPERM that is the file's, not the call's, is
// Open's answer, and no refusal of openat2 is remembered. As root, an
// immutable file opened for writing; otherwise O_NOATIME on a file of
// another owner.
func TestOpenFileEPERM(t *testing.T) {
	if os.Getenv(filterEnv) != "" {
		return // the child of TestOpenRefused
	}
	path, flags := "/etc/passwd", unix.O_RDONLY|unix.O_NOATIME
	if os.Geteuid() == 0 {
		path, flags = immutableFile(t), unix.O_WRONLY
	}
	_, err := Open(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != unix.EPERM {
		t.Fatalf("opening %s with flags %#x: %v, want EPERM", path, flags, err)
	}
	if refused.Load() {
		t.Fatal("Open took a file's EPERM for a refusal of openat2")
	}
}

// immutableFile makes a file with FS_IMMUTABLE_FL (root only), undone
// at the end of the test.
func immutableFile(t *testing.T) string {
	const immutable = 0x10 // FS_IMMUTABLE_FL
	path := t.TempDir() + "/immutable"
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, immutable); err != nil {
		t.Fatalf("making %s immutable: %v", path, err)
	}
	t.Cleanup(func() {
		unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, 0)
		f.Close()
	})
	return path
}

// refuseOpenat2 loads, for every thread, a seccomp filter that answers
// openat2 with errno and allows everything else.
func refuseOpenat2(errno unix.Errno) error {
	arch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if arch == 0 {
		return fmt.Errorf("no audit arch known for %s", runtime.GOARCH)
	}
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}, // seccomp_data.arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, K: arch},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0}, // seccomp_data.nr
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jf: 1, K: unix.SYS_OPENAT2},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs is the calling thread's; TSYNC puts the filter (and
	// no_new_privs) on every thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return e
	}
	return nil
}
