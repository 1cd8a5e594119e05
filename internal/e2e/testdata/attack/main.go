// The runtime would open the cgroup's cpu.cfs_* files, where /sys shows
// them, and keep them open to size GOMAXPROCS; the descriptor scan must see
// only what the process was started with.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0

// Command attack tries to get out of wsh's jail, one attempt after another,
// and prints one JSON object: attempt → "ok", the errno's name ("EPERM"),
// "killed:SIGNAL", or a value read back from the kernel. It is a test-only
// program for linux/amd64. Run it only inside wsh, or inside a throwaway
// `unshare -Urmn`: it makes the real system calls (mounts, namespaces,
// io_uring, vsock sockets). It changes no kernel setting: the one write to
// /proc/sys it tries is out of range, and a file it manages to create
// outside the jail's writable paths is removed at once.
//
//	attack [flags]
//
//	-hostpid N       a pid of the host: kill(N, 0), and with -ptrace, ptrace
//	                 and process_vm_readv of it
//	-tcp ADDR        a TCP listener on the host's loopback, to connect to
//	-abstract NAME   a listener on the host's abstract unix socket @NAME
//	-unix PATH       a listener on a host unix socket at PATH
//	-ptrace          also the ptrace attempts; only inside the jail, where
//	                 pid 1 is the jail's init and not the host's
//	-init N          the pid the "1" attempts of -ptrace go to (1 unless
//	                 told): on a lower rung of the ladder, with no PID
//	                 namespace, pid 1 is the host's init, and a process the
//	                 test owns stands in for the jail's
//	-tmpfs           first mount a tmpfs of this mount namespace and take the
//	                 file handles there, where open_by_handle_at needs no
//	                 capability of the host (throwaway namespaces only)
//	-filter          then load wsh's seccomp filter (seccomp.BuildFilter)...
//	-skip G,G        ...without these groups of seccomp.Policy (mutation tests)
//	-only F,F        only these families of attempts (see families)
//	-except F,F      all but these
//
// `attack -child tty` is the probe's own child for the terminal attempts.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// config is what the flags ask for.
type config struct {
	hostPID  int
	tcp      string
	abstract string
	unixPath string
	ptrace   bool
	init     int
	filter   bool
	skip     []string
	tmpfs    bool
	handles  string // the directory where file handles are taken
	only     []string
	except   []string
}

// results maps an attempt to what the kernel answered.
type results map[string]string

// A family is a set of attempts, run together.
type family struct {
	name string
	run  func(results, *config)
}

// families are run in this order. fds is not among them: it is read first,
// before anything else opens a descriptor.
var families = []family{
	{"privs", privs},
	{"vsock", vsock},
	{"io_uring", ioURing},
	{"foreign", foreignABI},
	{"namespaces", namespaces},
	{"mounts", mounts},
	{"keyrings", keyrings},
	{"kernel", kernelSurfaces},
	{"siginfo", siginfo},
	{"tty", tty},
	{"setuid", setuid},
	{"setid", setid},
	{"fs", filesystem},
	{"net", network},
	{"pids", pids},
	{"ptrace", ptrace},
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-child" && os.Args[2] == "tty" {
		ttyChild()
		return
	}
	// The scan comes first, before this process opens a descriptor.
	fds := scanFDs()
	cfg := parseFlags()
	// A killed child must not leave a core file in the working directory.
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		fail("setrlimit(RLIMIT_CORE): %v", err)
	}
	if cfg.tmpfs {
		var cleanup func()
		cfg.handles, cleanup = mountTmpfs()
		defer cleanup()
	}
	if cfg.filter {
		loadFilter(cfg.skip)
	}
	r := results{}
	if wanted(cfg, "fds") {
		fds.report(r)
	}
	for _, f := range families {
		if wanted(cfg, f.name) {
			f.run(r, cfg)
		}
	}
	b, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		fail("%v", err)
	}
	fmt.Println(string(b))
}

func parseFlags() *config {
	var cfg config
	var skip, only, except string
	flag.IntVar(&cfg.hostPID, "hostpid", 0, "a pid of the host")
	flag.StringVar(&cfg.tcp, "tcp", "", "a TCP listener on the host's loopback")
	flag.StringVar(&cfg.abstract, "abstract", "", "a host abstract unix socket")
	flag.StringVar(&cfg.unixPath, "unix", "", "a host unix socket's path")
	flag.BoolVar(&cfg.ptrace, "ptrace", false, "the ptrace attempts (inside the jail only)")
	flag.IntVar(&cfg.init, "init", 1, `the pid the "1" ptrace attempts go to`)
	flag.BoolVar(&cfg.tmpfs, "tmpfs", false, "take file handles on a tmpfs of this namespace")
	flag.BoolVar(&cfg.filter, "filter", false, "load wsh's seccomp filter first")
	flag.StringVar(&skip, "skip", "", "groups of seccomp.Policy left out of -filter")
	flag.StringVar(&only, "only", "", "only these families of attempts")
	flag.StringVar(&except, "except", "", "all families of attempts but these")
	flag.Parse()
	if flag.NArg() != 0 {
		fail("unexpected arguments %q", flag.Args())
	}
	cfg.handles = "/"
	cfg.skip = split(skip)
	cfg.only = split(only)
	cfg.except = split(except)
	if len(cfg.skip) > 0 && !cfg.filter {
		fail("-skip needs -filter")
	}
	return &cfg
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func wanted(cfg *config, name string) bool {
	return (len(cfg.only) == 0 || slices.Contains(cfg.only, name)) && !slices.Contains(cfg.except, name)
}

// errName is "ok" for no error, the name of the errno that err wraps
// ("EPERM"), or "error: TEXT" when it wraps none.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return "error: " + err.Error()
}

// call makes a raw system call and returns its result and errName.
func call(nr uintptr, args ...uintptr) (uintptr, string) {
	var a [6]uintptr
	copy(a[:], args)
	r, _, errno := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if errno != 0 {
		return r, unix.ErrnoName(errno)
	}
	return r, "ok"
}

// callClose is call for a system call that returns a descriptor: it closes
// the descriptor.
func callClose(nr uintptr, args ...uintptr) string {
	fd, res := call(nr, args...)
	if res == "ok" {
		unix.Close(int(fd))
	}
	return res
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "attack: "+format+"\n", args...)
	os.Exit(2)
}
