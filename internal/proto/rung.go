package proto

// Groups of the seccomp policy that only the rungs without namespaces
// add: without a network namespace, socket() of every family but AF_UNIX
// (WSH_NETWORK=none); without a PID namespace, ptrace and
// process_vm_readv/writev, which would reach the user's other processes.
const (
	NetGroup = "net"
	// NetProxyGroup: in NetGroup's place with WSH_NETWORK=proxy on the
	// landlock rung: sockets of the internet families are TCP only
	// (Landlock governs TCP, not UDP), and no data goes with a connect
	// (MSG_FASTOPEN), so that every connection is one Landlock checks.
	NetProxyGroup = "net-proxy"
	PtraceGroup   = "ptrace"
	// IPCGroup: without an IPC namespace, SysV shared memory, semaphores
	// and message queues, and POSIX message queues, are the host's.
	IPCGroup = "ipc"
	// SessionGroup: setsid and setpgid, so that a command's processes
	// stay in the process group that wsh kills when the command ends
	// (there is no PID namespace to end them).
	SessionGroup = "session"
	// SessionForkGroup: in SessionGroup's place in a lower rung's
	// session (Spec.Session), whose zygote gives each command a process
	// group of its own. setsid and setpgid go to the zygote, which holds
	// the filter's listener: it lets setpgid(0, 0) through for the child
	// it is forking, before that child's exec, and refuses every other
	// call (EPERM), so a command and all it starts stay in its group, as
	// with SessionGroup. clone(CLONE_PARENT) is refused: no process can
	// make a child of the zygote's fork thread but the zygote.
	SessionForkGroup = "session-fork"
	// GitGroup: on the full rung only, rename, renameat and renameat2 go
	// to wsh (SECCOMP_RET_USER_NOTIF, the listener on GitFD), which lets
	// every one through but a rename onto a repository's config that wsh
	// protects: that one wsh makes itself, as a write in place of the
	// host's file, if every key it adds is on its allowlist.
	GitGroup = "git-config"
)

// LowerRungGroups are the groups that only the rungs without namespaces
// have.
func LowerRungGroups() []string {
	return []string{NetGroup, NetProxyGroup, PtraceGroup, IPCGroup, SessionGroup, SessionForkGroup}
}
