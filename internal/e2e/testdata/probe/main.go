// The runtime would open the cgroup's cpu.cfs_* files, where /sys shows
// them, and keep them open to size GOMAXPROCS; the descriptor scan must see
// only what the process was started with.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command probe reads a boundary of the jail back from the kernel and prints
// what it saw, one fact a line, for the end-to-end tests. Run it only inside
// wsh: it makes real system calls.
//
//	probe fds            the open descriptors, scanned with fcntl(F_GETFD)
//	probe create PATH    the errno of open(PATH, O_CREAT|O_EXCL)
//	probe make PATH      the errno of each way to make PATH: write=
//	                     (open O_CREAT|O_TRUNC), mkdir=, symlink=, rename=
//	                     (of a file made in PATH's directory), renamedir=
//	                     (of a directory made there)
//	probe kill PID       the errno of kill(PID, 0)
//	probe connect ADDR   the errno of a TCP connect to ADDR (host:port)
//	probe pids           this process's pid and the pids /proc lists
//	probe stop-files     kill the jail's file server and stop (SIGSTOP) the
//	                     next one as soon as it is seen: "stopped PID"
//	probe steal-files    kill the jail's file server, and try to take the
//	                     channel of the next one (pidfd_getfd of its fd 0,
//	                     PTRACE_SEIZE) from its exec on: "stolen", or
//	                     "refused N" after N tries on the whole new server
//	probe sigqueue SIG PID  the errno of sigqueue(PID, SIG) (si_code SI_QUEUE)
//	probe hide-exit N [T]  exit N once a child of the probe (probe tracer
//	                       PID T) traces it (PTRACE_SEIZE); the child runs on
//	probe setsig SIG PID    the errno of F_SETSIG SIG on a pipe owned by PID
//	                        (F_SETOWN) and, if allowed, a write that signals
//	probe nonblock FD       set O_NONBLOCK on FD's open file description, as
//	                        node does on its standard streams, and print
//	                        "nonblock" if F_GETFL reads it back so
package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxFD bounds the descriptor scan; the tests pass far fewer.
const maxFD = 1024

func main() {
	// The scan comes first, before anything in this process opens a
	// descriptor of its own.
	if len(os.Args) == 2 && os.Args[1] == "fds" {
		fmt.Println(openFDs())
		return
	}
	if len(os.Args) < 2 {
		fail("usage: probe fds|create PATH|kill PID|connect ADDR|pids|sigqueue SIG PID|setsig SIG PID")
	}
	switch arg := strings.Join(os.Args[2:], " "); os.Args[1] {
	case "create":
		fmt.Println(errnoName(create(arg)))
	case "make":
		fmt.Println(makeEach(arg))
	case "kill":
		pid, err := strconv.Atoi(arg)
		if err != nil {
			fail(err.Error())
		}
		fmt.Println(errnoName(unix.Kill(pid, 0)))
	case "connect":
		fmt.Println(errnoName(connect(arg)))
	case "pids":
		pids()
	case "steal-files":
		stealFiles()
	case "stop-files":
		stopFiles()
	case "sigqueue":
		var sig, pid int
		if _, err := fmt.Sscan(arg, &sig, &pid); err != nil {
			fail(err.Error())
		}
		var info [128]byte                       // siginfo_t: si_signo, si_errno, si_code, ...
		*(*int32)(unsafe.Pointer(&info[8])) = -1 // SI_QUEUE
		_, _, errno := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(pid), uintptr(sig), uintptr(unsafe.Pointer(&info[0])))
		if errno != 0 {
			fmt.Println(unix.ErrnoName(errno))
		} else {
			fmt.Println("ok")
		}
	case "hide-exit":
		hideExit(arg)
	case "tracer":
		tracer(arg)
	case "setsig":
		var sig, pid int
		if _, err := fmt.Sscan(arg, &sig, &pid); err != nil {
			fail(err.Error())
		}
		fmt.Println(errnoName(setsig(sig, pid)))
	case "nonblock":
		fd, err := strconv.Atoi(arg)
		if err != nil {
			fail(err.Error())
		}
		fmt.Println(setNonblock(fd))
	default:
		fail("unknown probe " + os.Args[1])
	}
}

// openFDs lists the descriptors below maxFD that fcntl finds open; those
// above 2 with what /proc/self/fd says they are, as 3=pipe:[1234].
func openFDs() string {
	var open []int
	for fd := 0; fd < maxFD; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			open = append(open, fd)
		}
	}
	var out []string
	for _, fd := range open {
		s := strconv.Itoa(fd)
		if fd > 2 {
			// readlink opens nothing, so the list above stays true.
			target, _ := os.Readlink("/proc/self/fd/" + s)
			s += "=" + target
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// makeEach tries every way to make path and says what each gave; what
// one made stays (the test reads the host).
func makeEach(path string) string {
	var out []string
	try := func(way string, err error) { out = append(out, way+"="+errnoName(err)) }
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err == nil {
		unix.Write(fd, []byte("planted\n"))
		unix.Close(fd)
	}
	try("write", err)
	try("mkdir", unix.Mkdir(path, 0o755))
	try("symlink", unix.Symlink("/tmp", path))
	src := filepath.Join(filepath.Dir(path), fmt.Sprintf(".probe-make-%d", os.Getpid()))
	if err := os.WriteFile(src, []byte("planted\n"), 0o644); err != nil {
		try("rename", err)
	} else {
		try("rename", unix.Rename(src, path))
		os.Remove(src)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		try("renamedir", err)
	} else {
		try("renamedir", unix.Rename(src, path))
		os.Remove(src)
	}
	return strings.Join(out, " ")
}

func create(path string) error {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func connect(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// pids prints "self N" and then "proc N" for every pid directory in /proc.
func pids() {
	fmt.Println("self", os.Getpid())
	ents, err := os.ReadDir("/proc")
	if err != nil {
		fail(err.Error())
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
			fmt.Println("proc", e.Name(), strings.TrimSpace(string(comm)))
		}
	}
}

// errnoName is "ok" for no error, the errno's name (EROFS) for a system
// call's error, and the error's text otherwise.
func errnoName(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "probe:", msg)
	os.Exit(2)
}

// setsig asks for signal sig, with si_code POLL_IN, to go to pid when a
// pipe has data, and writes to it.
func setsig(sig, pid int) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETOWN, pid); err != nil {
		return err
	}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETSIG, sig); err != nil {
		return err
	}
	fl, err := unix.FcntlInt(uintptr(p[0]), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, fl|unix.O_ASYNC)
	}
	if err == nil {
		_, err = unix.Write(p[1], []byte("x"))
	}
	return err
}

// setNonblock sets O_NONBLOCK on fd and says what F_GETFL reads back.
func setNonblock(fd int) string {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NONBLOCK)
	}
	if err == nil {
		fl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	}
	switch {
	case err != nil:
		return errnoName(err)
	case fl&unix.O_NONBLOCK != 0:
		return "nonblock"
	}
	return "blocking"
}

// hideExit starts `probe tracer PID` with its own pid, waits until the
// tracer has seized it, and exits with status arg: told of the exit first,
// the tracer never waits for it, so the probe's parent cannot reap it.
func hideExit(arg string) {
	f := strings.Fields(arg + " -")
	status, err := strconv.Atoi(f[0])
	if err != nil {
		fail(err.Error())
	}
	self, err := os.Executable()
	if err != nil {
		fail(err.Error())
	}
	cmd := exec.Command(self, "tracer", strconv.Itoa(os.Getpid()), f[1])
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err.Error())
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fail(err.Error())
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "seized\n" {
		fail(fmt.Sprintf("the tracer said %q: %v", line, err))
	}
	os.Exit(status)
}

// tracer seizes pid and then does nothing, for ever.
func tracer(arg string) {
	pid, err := strconv.Atoi(strings.Fields(arg)[0])
	if err != nil {
		fail(err.Error())
	}
	runtime.LockOSThread() // the tracer is this thread
	if _, _, errno := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0, 0, 0); errno != 0 {
		fail("PTRACE_SEIZE: " + errno.Error())
	}
	fmt.Println("seized")
	for {
		time.Sleep(time.Hour) // not select{}: Go would call that a deadlock
	}
}

// filesServer is the pid of a process of the jail's file server other
// than skip, or -1.
func filesServer(skip int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == skip {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.HasPrefix(string(b), "wsh-jail-files\x00") {
			return pid
		}
	}
	return -1
}

// stealFiles kills the file server, waits for the next one (the shell
// starts it at its next access) and tries to take its channel from the
// moment it is seen: its window between exec and its own prctl is what
// is tried.
func stealFiles() {
	old := filesServer(0)
	if old < 0 {
		fail("no file server")
	}
	unix.Kill(old, unix.SIGKILL)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		pid := filesServer(old)
		if pid < 0 {
			continue
		}
		pfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		tries := 0
		for k := 0; k < 20000; k++ {
			tries++
			if fd, err := unix.PidfdGetfd(pfd, 0, 0); err == nil {
				var st unix.Stat_t
				unix.Fstat(fd, &st)
				fmt.Printf("stolen socket=%v\n", st.Mode&unix.S_IFMT == unix.S_IFSOCK)
				return
			}
			if unix.PtraceSeize(pid) == nil {
				fmt.Println("stolen ptrace")
				return
			}
		}
		fmt.Println("refused", tries)
		return
	}
	fmt.Println("no new server")
}

// stopFiles kills the file server and stops the next one the moment it
// is seen, before it can say anything itself.
func stopFiles() {
	old := filesServer(0)
	if old < 0 {
		fail("no file server")
	}
	unix.Kill(old, unix.SIGKILL)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if pid := filesServer(old); pid > 0 {
			unix.Kill(pid, unix.SIGSTOP)
			fmt.Println("stopped", pid)
			return
		}
	}
	fmt.Println("no new server")
}
