//go:build cgo

package seccomp

import (
	"fmt"
	"io"
	"os"
	"slices"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// A RuleGroup is one named part of the seccomp policy.
type RuleGroup struct {
	Name  string
	Calls []string // what it refuses, for people to read
	add   func(*libseccomp.ScmpFilter) error
}

var (
	eperm  = libseccomp.ActErrno.SetReturnCode(int16(unix.EPERM))
	eacces = libseccomp.ActErrno.SetReturnCode(int16(unix.EACCES))
	enosys = libseccomp.ActErrno.SetReturnCode(int16(unix.ENOSYS))
)

// ipcCalls are SysV IPC and POSIX message queues (the lower rungs' ipc
// group).
var ipcCalls = []string{"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
	"msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"}

// The CLONE_NEW* flags. CLONE_NEWTIME shares its bit with the exit signal in
// clone(2), so it is checked for unshare only; clone3 is refused whole.
var (
	cloneNewFlags   = []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_NEWNET}
	unshareNewFlags = append([]uint64{unix.CLONE_NEWTIME}, cloneNewFlags...)
)

// policy is the seccomp deny list, in groups (Policy gives a copy). Everything else is allowed;
// a call from a foreign ABI kills the process.
var policy = []RuleGroup{
	{"vsock", []string{"socket(AF_VSOCK)", "socketpair(AF_VSOCK)"}, func(f *libseccomp.ScmpFilter) error {
		// The family is an int: compare its low 32 bits only, or garbage
		// in the upper half passes (libseccomp issue 383).
		for _, call := range []string{"socket", "socketpair"} {
			if err := denyMasked(f, call, eperm, 0, 0xffffffff, unix.AF_VSOCK); err != nil {
				return err
			}
		}
		return nil
	}},
	{proto.UnixGroup, []string{"socket(AF_UNIX)", "socketpair(AF_UNIX) but stream and seqpacket"}, func(f *libseccomp.ScmpFilter) error {
		// A read-only mount does not stop connect(2) on a socket file,
		// and a network namespace does not cover unix sockets by path: a
		// host daemon's socket in /tmp (tmux, an X server, ssh-agent) would
		// be a way out. A stream or seqpacket socketpair stays connected to
		// its peer; a datagram one can be disconnected (connect AF_UNSPEC)
		// and then send to any socket path with sendto(2).
		if err := denyMasked(f, "socket", eperm, 0, 0xffffffff, unix.AF_UNIX); err != nil {
			return err
		}
		// Only stream and seqpacket pairs stay: the kernel makes a
		// SOCK_RAW or SOCK_RDM unix pair a datagram one.
		for t := uint64(0); t <= 0xf; t++ {
			if t == unix.SOCK_STREAM || t == unix.SOCK_SEQPACKET {
				continue
			}
			if err := denyConds(f, "socketpair", eperm, cond(0, 0xffffffff, unix.AF_UNIX), cond(1, 0xf, t)); err != nil {
				return err
			}
		}
		return nil
	}},
	{proto.NetGroup, []string{"socket and socketpair of every family but AF_UNIX (EACCES)"}, func(f *libseccomp.ScmpFilter) error {
		// Only on the rungs without a network namespace, with
		// WSH_NETWORK=none: a command shares the host's network there,
		// so no socket of a family that reaches it. AF_UNIX is the unix
		// group's. An int compared whole: garbage in the upper half is
		// refused too.
		for _, call := range []string{"socket", "socketpair"} {
			if err := denyConds(f, call, eacces, condition{0, libseccomp.CompareNotEqual, []uint64{unix.AF_UNIX}}); err != nil {
				return err
			}
		}
		return nil
	}},
	{proto.NetProxyGroup, []string{"socket of every family but AF_UNIX, AF_INET and AF_INET6 (EACCES)",
		"socket(AF_INET, AF_INET6) but SOCK_STREAM with protocol 0 or IPPROTO_TCP (EACCES)",
		"sendto, sendmsg and sendmmsg with MSG_FASTOPEN (EACCES)", "listen (EACCES)"}, func(f *libseccomp.ScmpFilter) error {
		// With WSH_NETWORK=proxy on the landlock rung, which limits TCP
		// connections to the proxy's port: no other family, no UDP or
		// raw socket (Landlock does not govern them), no other protocol
		// over a stream (MPTCP, SCTP). The family and the protocol are
		// ints: a value of 64 bits is compared whole, so garbage in the
		// upper half is refused too.
		fams := map[uint64]bool{unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true}
		for _, call := range []string{"socket", "socketpair"} {
			if err := denyConds(f, call, eacces, condition{0, libseccomp.CompareGreaterEqual, []uint64{64}}); err != nil {
				return err
			}
			for fam := uint64(0); fam < 64; fam++ {
				if fams[fam] && !(call == "socketpair" && fam != unix.AF_UNIX) {
					continue
				}
				if err := denyConds(f, call, eacces, condition{0, libseccomp.CompareEqual, []uint64{fam}}); err != nil {
					return err
				}
			}
		}
		for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
			inet := condition{0, libseccomp.CompareEqual, []uint64{fam}}
			for t := uint64(0); t <= 0xf; t++ {
				if t == unix.SOCK_STREAM {
					continue
				}
				if err := denyConds(f, "socket", eacces, inet, cond(1, 0xf, t)); err != nil {
					return err
				}
			}
			if err := denyConds(f, "socket", eacces, inet, condition{2, libseccomp.CompareGreaterEqual, []uint64{unix.IPPROTO_TCP + 1}}); err != nil {
				return err
			}
			for p := uint64(1); p < unix.IPPROTO_TCP; p++ {
				if err := denyConds(f, "socket", eacces, inet, condition{2, libseccomp.CompareEqual, []uint64{p}}); err != nil {
					return err
				}
			}
		}
		// listen(2) on a socket that was never bound binds it to a port
		// of the kernel's choosing on every address, which Landlock does
		// not check: a server on the host's network. A command's own
		// unix sockets (WSH_UNIX_SOCKETS=allow) cannot listen either: a
		// filter cannot tell the families of descriptors apart.
		if err := deny(f, "listen", eacces); err != nil {
			return err
		}
		// TCP Fast Open connects inside sendto(2) and sendmsg(2), where
		// no connect(2) is made for Landlock to check.
		for call, arg := range map[string]uint{"sendto": 3, "sendmsg": 2, "sendmmsg": 3} {
			if err := denyMasked(f, call, eacces, arg, unix.MSG_FASTOPEN, unix.MSG_FASTOPEN); err != nil {
				return err
			}
		}
		return nil
	}},
	{proto.IPCGroup, ipcCalls, denyAll(eperm, ipcCalls...)},
	{proto.SessionGroup, []string{"setsid", "setpgid"}, denyAll(eperm, "setsid", "setpgid")},
	{proto.SessionForkGroup, []string{"setsid and setpgid (the zygote answers: setpgid(0, 0) only in its own fork before the exec)", "clone(CLONE_PARENT)"}, func(f *libseccomp.ScmpFilter) error {
		// The zygote that loads this program holds its listener
		// (SECCOMP_FILTER_FLAG_NEW_LISTENER), and lets a call through
		// only for the child it is forking (initproc's answer); every
		// other process gets EPERM, and ENOSYS once the zygote is gone.
		if err := denyAll(libseccomp.ActNotify, "setsid", "setpgid")(f); err != nil {
			return err
		}
		// The zygote tells its fork by its parent: no process may make
		// a child for its own parent.
		return denyMasked(f, "clone", eperm, 0, unix.CLONE_PARENT, unix.CLONE_PARENT)
	}},
	{proto.GitGroup, []string{"rename, renameat, renameat2 (to wsh, which lets each through but one onto a protected git config, which it makes itself or refuses)"}, denyAll(libseccomp.ActNotify, "rename", "renameat", "renameat2")},
	{proto.PtraceGroup, []string{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}, denyAll(eperm, "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")},
	{"io_uring", []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, denyAll(eperm, "io_uring_setup", "io_uring_enter", "io_uring_register")},
	{"namespaces", []string{"unshare(CLONE_NEW*)", "clone(CLONE_NEW*)", "clone3 (ENOSYS)", "setns"}, func(f *libseccomp.ScmpFilter) error {
		for _, fl := range unshareNewFlags {
			if err := denyMasked(f, "unshare", eperm, 0, fl, fl); err != nil {
				return err
			}
		}
		for _, fl := range cloneNewFlags {
			if err := denyMasked(f, "clone", eperm, 0, fl, fl); err != nil {
				return err
			}
		}
		// clone3 passes its flags in memory a filter cannot read; ENOSYS
		// makes libc fall back to clone, where the flags are checked.
		if err := deny(f, "clone3", enosys); err != nil {
			return err
		}
		return deny(f, "setns", eperm)
	}},
	{MountsGroup, mountCalls, denyAll(eperm, mountCalls...)},
	{"keyrings", []string{"keyctl", "add_key", "request_key"}, denyAll(eperm, "keyctl", "add_key", "request_key")},
	{"kernel", kernelCalls, denyAll(eperm, kernelCalls...)},
	{"siginfo", []string{"rt_sigqueueinfo and rt_tgsigqueueinfo of a fault signal", "fcntl(F_SETSIG) of a fault signal", "pidfd_send_signal with a siginfo"}, func(f *libseccomp.ScmpFilter) error {
		// Go's runtime takes a SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV,
		// SIGSTKFLT or SIGSYS whose si_code is not SI_USER or SI_TKILL for
		// a real fault, and dies of it, caught or not: a target could end
		// its init (PID 1), and dump the init's stacks on its stderr, with
		// a queued signal (sigqueue(3): SI_QUEUE), to PID 1 or to the tid
		// of any of its threads, or with the signal of its own descriptor
		// (F_SETOWN 1, F_SETSIG, O_ASYNC: SI_SIGIO, POLL_*; leases and
		// dnotify signal the same way). These signals are refused by
		// number, whatever the pid. kill, tgkill and pidfd_send_signal
		// without a siginfo give SI_USER or SI_TKILL; a pidfd does not say
		// which process it names, so no pidfd_send_signal may bring a
		// siginfo of its own.
		for _, s := range proto.FaultSignals {
			sig := uint64(s)
			if err := denyMasked(f, "rt_sigqueueinfo", eperm, 1, 0xffffffff, sig); err != nil {
				return err
			}
			if err := denyMasked(f, "rt_tgsigqueueinfo", eperm, 2, 0xffffffff, sig); err != nil {
				return err
			}
			if err := denyConds(f, "fcntl", eperm, cond(1, 0xffffffff, unix.F_SETSIG), cond(2, 0xffffffff, sig)); err != nil {
				return err
			}
		}
		return denyConds(f, "pidfd_send_signal", eperm, nonZero(2))
	}},
	{"setid", setidCalls, func(f *libseccomp.ScmpFilter) error {
		// A set-user-ID (or set-group-ID) file left in a writable path
		// runs with its owner's uid (group) for anyone on the host: as the
		// jail's root, a setuid-root binary in /tmp. So no call may set
		// either bit. A chmod cannot tell a directory from a file, so a
		// setgid directory made with chmod is refused too (mkdir may make
		// one). The mode is a mode_t: only its bits are compared.
		for _, bit := range []uint64{unix.S_ISUID, unix.S_ISGID} {
			for _, c := range []struct {
				name string
				arg  uint
			}{{"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}, {"creat", 1}, {"mknod", 1}, {"mknodat", 2}} {
				if err := denyMasked(f, c.name, eperm, c.arg, bit, bit); err != nil {
					return err
				}
			}
			// open and openat use the mode only to create a file.
			for _, fl := range []uint64{unix.O_CREAT, unix.O_TMPFILE &^ unix.O_DIRECTORY} {
				if err := denyConds(f, "open", eperm, cond(1, fl, fl), cond(2, bit, bit)); err != nil {
					return err
				}
				if err := denyConds(f, "openat", eperm, cond(2, fl, fl), cond(3, bit, bit)); err != nil {
					return err
				}
			}
		}
		// openat2 carries its flags and mode in a struct that a filter
		// cannot read: ENOSYS, on which its callers fall back to openat.
		return deny(f, "openat2", enosys)
	}},
	{"tty", []string{"ioctl(TIOCSTI)", "ioctl(TIOCLINUX)", "ioctl(TIOCSETD)", "ioctl(TIOCEXCL)", "ioctl(TCXONC, TCOOFF or TCIOFF)"}, func(f *libseccomp.ScmpFilter) error {
		// The request is an int in the kernel: mask the upper half, or
		// TIOCSTI with high bits set passes (CVE-2019-10063). TIOCSTI
		// types into the caller's terminal; TIOCLINUX does on a console;
		// TIOCSETD changes the line discipline, and TIOCEXCL makes every
		// later open of the terminal fail (EBUSY): either leaves the
		// user's terminal unusable after the command.
		for _, req := range []uint64{unix.TIOCSTI, unix.TIOCLINUX, unix.TIOCSETD, unix.TIOCEXCL} {
			if err := denyMasked(f, "ioctl", eperm, 1, 0xffffffff, req); err != nil {
				return err
			}
		}
		// TCXONC with TCOOFF suspends the terminal's output, and with
		// TCIOFF sends it the stop character: what wsh and the user's
		// shell write next never shows, or wsh blocks on it. (The kernel
		// compares the whole argument; the lower half here refuses a
		// superset.) TCOON and TCION pass: they undo it.
		for _, action := range []uint64{unix.TCOOFF, unix.TCIOFF} {
			if err := denyConds(f, "ioctl", eperm, cond(1, 0xffffffff, unix.TCXONC), cond(2, 0xffffffff, action)); err != nil {
				return err
			}
		}
		return nil
	}},
}

// setidCalls are what the setid group refuses, for people to read.
var setidCalls = []string{"chmod, fchmod, fchmodat, fchmodat2 with S_ISUID or S_ISGID",
	"open, openat with O_CREAT or O_TMPFILE and S_ISUID or S_ISGID", "creat, mknod, mknodat with S_ISUID or S_ISGID",
	"openat2 (ENOSYS)"}

var (
	mountCalls  = []string{"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr"}
	kernelCalls = []string{"bpf", "perf_event_open", "userfaultfd", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at", "name_to_handle_at"}
)

// BuildFilter builds the policy, without the groups named in skip (for
// mutation tests only). A name that is no group is an error: a mutation
// test with a typo would otherwise test the whole policy and pass.
func BuildFilter(skip ...string) (*libseccomp.ScmpFilter, error) {
	for _, s := range skip {
		if !slices.ContainsFunc(policy, func(g RuleGroup) bool { return g.Name == s }) {
			return nil, fmt.Errorf("seccomp: no rule group %q", s)
		}
	}
	f, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, fmt.Errorf("seccomp: new filter: %w", err)
	}
	if err := f.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		f.Release()
		return nil, fmt.Errorf("seccomp: bad arch action: %w", err)
	}
	for _, g := range policy {
		if slices.Contains(skip, g.Name) {
			continue
		}
		if err := g.add(f); err != nil {
			f.Release()
			return nil, fmt.Errorf("seccomp: %s: %w", g.Name, err)
		}
	}
	return f, nil
}

func deny(f *libseccomp.ScmpFilter, name string, act libseccomp.ScmpAction) error {
	call, err := syscallOf(name)
	if err != nil {
		return err
	}
	return f.AddRule(call, act)
}

// newerCalls are the numbers, on this architecture, of calls newer than
// the libseccomp that wsh may be built with (Debian 12's 2.5.4 knows none
// past futex_requeue, 456).
var newerCalls = map[string]uintptr{
	"open_tree_attr": unix.SYS_OPEN_TREE_ATTR,
}

// syscallOf is the call named name, by libseccomp's table or newerCalls.
func syscallOf(name string) (libseccomp.ScmpSyscall, error) {
	call, err := libseccomp.GetSyscallFromName(name)
	if err == nil {
		return call, nil
	}
	if n, ok := newerCalls[name]; ok {
		return libseccomp.ScmpSyscall(n), nil
	}
	return 0, fmt.Errorf("%s: %w", name, err)
}

func denyAll(act libseccomp.ScmpAction, names ...string) func(*libseccomp.ScmpFilter) error {
	return func(f *libseccomp.ScmpFilter) error {
		for _, n := range names {
			if err := deny(f, n, act); err != nil {
				return err
			}
		}
		return nil
	}
}

func denyMasked(f *libseccomp.ScmpFilter, name string, act libseccomp.ScmpAction, arg uint, mask, value uint64) error {
	return denyConds(f, name, act, cond(arg, mask, value))
}

// A condition is one comparison of an argument.
type condition struct {
	arg    uint
	op     libseccomp.ScmpCompareOp
	values []uint64
}

// cond is (argument & mask) == value.
func cond(arg uint, mask, value uint64) condition {
	return condition{arg, libseccomp.CompareMaskedEqual, []uint64{mask, value}}
}

// nonZero is argument != 0 (a pointer that is not NULL).
func nonZero(arg uint) condition { return condition{arg, libseccomp.CompareNotEqual, []uint64{0}} }

// denyConds refuses name when every condition holds.
func denyConds(f *libseccomp.ScmpFilter, name string, act libseccomp.ScmpAction, conds ...condition) error {
	call, err := syscallOf(name)
	if err != nil {
		return err
	}
	var cs []libseccomp.ScmpCondition
	for _, c := range conds {
		sc, err := libseccomp.MakeCondition(c.arg, c.op, c.values...)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		cs = append(cs, sc)
	}
	return f.AddRuleConditional(call, act, cs)
}

// CompileFilter builds the policy (without the groups in skip) and returns
// its BPF program, so that the parent compiles it once and every jail init
// loads it with seccomp(2) instead of building it again with libseccomp.
// It uses ExportBPF to a memfd: ExportBPFMem needs libseccomp 2.6, and
// Debian 12 has 2.5.4.
func CompileFilter(skip ...string) ([]byte, error) {
	f, err := BuildFilter(skip...)
	if err != nil {
		return nil, err
	}
	defer f.Release()
	fd, err := unix.MemfdCreate("wsh-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	mem := os.NewFile(uintptr(fd), "wsh-seccomp")
	defer mem.Close()
	if err := f.ExportBPF(mem); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := mem.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	prog, err := io.ReadAll(mem)
	if err != nil {
		return nil, err
	}
	if err := proto.CheckFilter(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// Policy returns a copy of the seccomp deny list, in groups, for people
// and tests to read: the filter is compiled from the package's own, which
// no caller can change.
func Policy() []RuleGroup {
	out := make([]RuleGroup, len(policy))
	for i, g := range policy {
		out[i] = RuleGroup{Name: g.Name, Calls: slices.Clone(g.Calls), add: g.add}
	}
	return out
}

// MountsGroup is the rule group of the mount calls.
const MountsGroup = "mounts"

// CompileGroup is the program of the policy's group name alone (the full
// rung's GitGroup: proto.Spec.GitFilter).
func CompileGroup(name string) ([]byte, error) {
	var others []string
	found := false
	for _, g := range policy {
		if g.Name == name {
			found = true
		} else {
			others = append(others, g.Name)
		}
	}
	if !found {
		return nil, fmt.Errorf("seccomp: no group %q", name)
	}
	return CompileFilter(others...)
}

// CompileSplit is CompileFilter (without the groups in skip) in two
// programs for a session's init on the full rung: threads, the policy
// without MountsGroup, which the init loads on every thread (its
// protector's, which binds the protected paths that appear later,
// included), and fork, MountsGroup alone, which it loads on top on the
// thread that forks the commands. A command inherits both: the whole
// policy.
func CompileSplit(skip ...string) (threads, fork []byte, err error) {
	if threads, err = CompileFilter(append(slices.Clone(skip), MountsGroup)...); err != nil {
		return nil, nil, err
	}
	others := slices.Clone(skip)
	for _, g := range policy {
		if g.Name != MountsGroup {
			others = append(others, g.Name)
		}
	}
	if fork, err = CompileFilter(others...); err != nil {
		return nil, nil, err
	}
	return threads, fork, nil
}
