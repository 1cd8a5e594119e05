package initproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"
	"wsh/degrade"

	"golang.org/x/sys/unix"
)

// Landlock's scopes (ABI 6, Linux 6.12): a domain's processes cannot
// connect to an abstract unix socket bound outside the domain, nor signal
// a process outside it.
const (
	landlockScopeAbstractUnix = 1 << 0
	landlockScopeSignal       = 1 << 1
	landlockCreateVersion     = 1 << 0 // LANDLOCK_CREATE_RULESET_VERSION
)

// landlockRulesetAttr is struct landlock_ruleset_attr as of ABI 6.
type landlockRulesetAttr struct {
	handledAccessFS, handledAccessNet, scoped uint64
}

// landlockScopes puts the jail in a Landlock domain that restricts nothing
// but its scopes. Abstract unix sockets belong to a network namespace: with
// WSH_NETWORK=host the jail shares the host's, and without the scope a
// command could connect to any host daemon's abstract socket (an X server,
// a D-Bus or systemd one). Signals are already scoped by the PID
// namespace. Where the kernel has no Landlock, or an ABI before 6, the
// step does nothing (docs/sandbox.md).
func landlockScopes(*setupState) error {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateVersion)
	switch {
	case errno == unix.ENOSYS || errno == unix.EOPNOTSUPP:
		return nil // no Landlock here, or off at boot
	case errno != 0:
		return os.NewSyscallError("landlock_create_ruleset(version)", errno)
	case abi < 6:
		return nil
	}
	attr := landlockRulesetAttr{scoped: landlockScopeAbstractUnix | landlockScopeSignal}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return os.NewSyscallError("landlock_create_ruleset", errno)
	}
	defer unix.Close(int(fd))
	// landlock_restrict_self acts on the calling thread, which is the one
	// that forks the target (the init runs locked to its thread), and
	// needs no_new_privs, set in the step before.
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return os.NewSyscallError("landlock_restrict_self", errno)
	}
	return nil
}

// Landlock's file system rights, by the ABI that brought them.
const (
	llRead     = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llFileRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE
	llABI1     = 0x1fff // EXECUTE to MAKE_SYM
	// What a file that is not a directory can be granted (the others are
	// about directory entries).
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// landlockFSRights are the file system rights that Landlock ABI abi
// knows.
func landlockFSRights(abi int) uint64 {
	r := uint64(llABI1)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// landlockDevices are the devices a command reads and writes as it would
// on any host. Not /dev/pts: the host's other terminals are there.
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// A landlockRules is a ruleset under construction.
type landlockRules struct {
	fd      int
	handled uint64
	hidden  []string // resolved paths whose contents no rule may reach
	// The hidden paths and their ancestors by identity: Landlock's rules
	// hold for inodes, so a bind mount of a hidden path, or of a directory
	// above one, reached by another path, must be walked (or left out)
	// as the path itself is.
	hiddenIDs, aboveIDs map[fileID]bool
}

type fileID struct{ dev, ino uint64 }

func idOf(path string) (fileID, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return fileID{}, false
	}
	return fileID{st.Dev, st.Ino}, true
}

// noteIDs records the identities of the hidden paths and their ancestors
// (but /).
func (rs *landlockRules) noteIDs() {
	rs.hiddenIDs, rs.aboveIDs = map[fileID]bool{}, map[fileID]bool{}
	for _, h := range rs.hidden {
		if id, ok := idOf(h); ok {
			rs.hiddenIDs[id] = true
		}
		for d := filepath.Dir(h); d != "/" && d != "."; d = filepath.Dir(d) {
			if id, ok := idOf(d); ok {
				rs.aboveIDs[id] = true
			}
		}
	}
}

// landlockRuleset is the landlock rung's step: one Landlock domain in
// which the target reads and executes everywhere but beneath the hidden
// paths, writes only beneath the writable paths (and to the usual
// devices), makes no TCP connection and binds no TCP port (with
// WSH_NETWORK=none, ABI 4), and signals no process and reaches no
// abstract unix socket outside the domain (ABI 6). Landlock grants by
// hierarchy and cannot take a subtree back: a hidden path is left out by
// granting its ancestors' other entries one by one instead of the
// ancestor, so its name can be listed but not its contents read
// (docs/sandbox.md, "The ladder"). On the seccomp rung the step does
// nothing.
func landlockRuleset(st *setupState) error {
	if st.spec.Rung != degrade.RungLandlock {
		return nil
	}
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateVersion)
	if errno != 0 {
		// ENOSYS: no Landlock (gVisor, an old kernel); EOPNOTSUPP: off
		// at boot. The parent steps down to the seccomp rung.
		return os.NewSyscallError("landlock_create_ruleset(version)", errno)
	}
	abi := int(v)
	attr := landlockRulesetAttr{handledAccessFS: landlockFSRights(abi)}
	if abi >= 4 && !st.spec.HostNetwork {
		attr.handledAccessNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.scoped = landlockScopeAbstractUnix | landlockScopeSignal
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return os.NewSyscallError("landlock_create_ruleset", errno)
	}
	rs := &landlockRules{fd: int(fd), handled: attr.handledAccessFS}
	defer unix.Close(rs.fd)
	// Every hidden path, also one that did not exist when wsh started:
	// its ancestors are granted entry by entry, so what is made there
	// later is granted nothing. /dev is left out of the read grant too:
	// other terminals (/dev/pts), input devices and the like are the
	// host's; the usual devices are granted below.
	for _, h := range st.spec.Hidden {
		rs.hidden = append(rs.hidden, h.Path)
	}
	rs.hidden = append(rs.hidden, "/dev")
	rs.noteIDs()
	if err := rs.grant("/", llRead, 0); err != nil {
		return err
	}
	rs.hidden = rs.hidden[:len(rs.hidden)-1]
	rs.noteIDs()
	for _, w := range st.spec.Writable {
		if err := rs.grant(w.Path, rs.handled, 0); err != nil {
			return err
		}
	}
	if st.spec.ShmDir.Path != "" {
		// The interpreter's FIFOs: a process substitution's command
		// opens its FIFO, to read or to write.
		if err := rs.grant(st.spec.ShmDir.Path, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE, 0); err != nil {
			return err
		}
	}
	for _, d := range landlockDevices {
		err := rs.grant(d, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_TRUNCATE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV, 0)
		if err != nil {
			return err
		}
	}
	// The command's own terminal, when a standard stream is one: a
	// command that opens /dev/stdout or /dev/tty's twin reaches it by
	// its /dev/pts path. Only that one: the host's other terminals are
	// there too.
	for fd := 0; fd <= 2; fd++ {
		if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && strings.HasPrefix(p, "/dev/pts/") {
			if err := rs.rule(p, unix.LANDLOCK_ACCESS_FS_READ_FILE|unix.LANDLOCK_ACCESS_FS_WRITE_FILE|unix.LANDLOCK_ACCESS_FS_IOCTL_DEV); err != nil {
				return err
			}
		}
	}
	if st.spec.ProxyPort != 0 && attr.handledAccessNet == 0 {
		// Without ABI 4 nothing would limit TCP to the proxy's port (the
		// parent asks for it only with ABI 4).
		return os.NewSyscallError("landlock: the proxy's port needs ABI 4", unix.EOPNOTSUPP)
	}
	if attr.handledAccessNet != 0 && st.spec.ProxyPort != 0 {
		// WSH_NETWORK=proxy: TCP connections to the proxy's port only.
		// Landlock's rule is a port's, on any address.
		np := landlockNetPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(st.spec.ProxyPort)}
		if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), landlockRuleNetPort, uintptr(unsafe.Pointer(&np)), 0, 0, 0); errno != 0 {
			return os.NewSyscallError("landlock_add_rule(the proxy's port)", errno)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), 0, 0); errno != 0 {
		return os.NewSyscallError("landlock_restrict_self", errno)
	}
	return nil
}

// landlockRuleNetPort and landlockNetPortAttr are LANDLOCK_RULE_NET_PORT
// and struct landlock_net_port_attr (ABI 4), which x/sys/unix lacks.
const landlockRuleNetPort = 2

type landlockNetPortAttr struct {
	allowedAccess, port uint64
}

// grant allows rights beneath path, but beneath no hidden path: where a
// hidden path lies beneath path (by its path, or by identity: a bind
// mount of it or of a directory above it), path's own entries are granted
// one by one instead (the hidden one left out), and so on down.
func (rs *landlockRules) grant(path string, rights uint64, depth int) error {
	for _, h := range rs.hidden {
		if h == path || strings.HasPrefix(path, h+"/") || h == "/" {
			return nil // beneath a hidden path: nothing
		}
	}
	id, known := idOf(path)
	if known && rs.hiddenIDs[id] {
		return nil // the hidden path itself, mounted here too
	}
	holds := path == "/" || known && rs.aboveIDs[id]
	for _, h := range rs.hidden {
		if strings.HasPrefix(h, path+"/") {
			holds = true
			break
		}
	}
	if !holds {
		return rs.rule(path, rights)
	}
	if depth > 64 {
		return nil // a loop of bind mounts: nothing more
	}
	// The directory itself may be listed (READ_DIR is granted beneath
	// it, hidden path included: names, not contents).
	if err := rs.rule(path, rights&unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		// A directory that cannot be listed (mode 0711), or is gone:
		// nothing beneath it is granted. Less is readable, and this is no
		// refusal of Landlock.
		return nil
	}
	for _, e := range ents {
		child := strings.TrimSuffix(path, "/") + "/" + e.Name()
		if err := rs.grant(child, rights, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// rule adds one path-beneath rule: rights on path, and beneath it when it
// is a directory (a file can only get the file rights). A symlink is not
// followed: its target is granted where it lies, by its own rule.
func (rs *landlockRules) rule(path string, rights uint64) error {
	rights &= rs.handled
	if rights == 0 {
		return nil
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		// Gone, or not reachable by this user: nothing to grant.
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "landlock: stat", Path: path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		return nil
	default:
		rights &= llFileRights
	}
	if rights == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); errno != 0 {
		return &os.PathError{Op: "landlock_add_rule", Path: path, Err: errno}
	}
	return nil
}
