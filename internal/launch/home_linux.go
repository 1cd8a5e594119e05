//go:build linux && cgo

package launch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
	"wsh/internal/resolve"
)

// ErrHomeInUse says a home cannot be reset, or its keeper started, while
// a wsh still uses it.
var ErrHomeInUse = errors.New("the jail's home is in use by a running wsh")

// A Home is this process's connection to the keeper of one copy-on-write
// home: every Jailer of the process with the same plan shares it.
type Home struct {
	plan   HomePlan
	shared *Home // a project's home: the home's shared layer, held with it
	mu     sync.Mutex
	refs   int
	conn   int
	lost   error // set once the keeper has gone: no more clones
}

// KeeperRefresh is the age after which the keeper mounts the home's
// overlay anew, once nothing uses its mount (proto.KeeperSpec.Refresh).
var KeeperRefresh = time.Second

var openHomes = struct {
	sync.Mutex
	m map[string]*Home
}{m: map[string]*Home{}}

// OpenHome connects to the keeper of plan's home, starting one if none
// runs, and returns the process's connection to it. Release it when done.
func OpenHome(plan HomePlan) (*Home, error) {
	openHomes.Lock()
	defer openHomes.Unlock()
	if h := openHomes.m[plan.Dir()]; h != nil {
		h.refs++
		return h, nil
	}
	h := &Home{plan: plan, refs: 1}
	if plan.Project != "" {
		// The shared layer's keeper first: the project's keeper takes
		// the caches from it, and it stays while this process holds it.
		openHomes.Unlock()
		shared, err := OpenHome(plan.Shared())
		openHomes.Lock()
		if err != nil {
			return nil, err
		}
		if o := openHomes.m[plan.Dir()]; o != nil {
			shared.Release()
			o.refs++
			return o, nil
		}
		h.shared = shared
	}
	err := plan.prepare()
	if err == nil {
		err = h.connect()
	}
	if err != nil {
		if h.shared != nil {
			openHomes.Unlock()
			h.shared.Release()
			openHomes.Lock()
		}
		return nil, err
	}
	openHomes.m[plan.Dir()] = h
	return h, nil
}

// connect connects to the keeper, or starts one and connects to it. A
// keeper that another wsh is starting (or one that is ending) holds the
// keeper lock for a moment: connect waits for it, at most 5 s.
func (h *Home) connect() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := h.plan.dial()
		if err == nil {
			h.conn = c
			return nil
		}
		if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ECONNREFUSED) {
			return err
		}
		err = startKeeper(h.plan)
		switch {
		case err == nil:
		case errors.Is(err, unix.EWOULDBLOCK) && time.Now().Before(deadline):
			time.Sleep(20 * time.Millisecond)
		case errors.Is(err, unix.EBUSY):
			return fmt.Errorf("%w (its keeper was stopped while it ran): %v", ErrHomeInUse, err)
		default:
			return err
		}
	}
}

// A Clone is one use of the home: a detached mount of the keeper's
// overlay, and its generation's lock, held shared, which must stay open
// for as long as the mount is used (a jail init holds it for its life).
type Clone struct {
	Mount, Lock *os.File
}

// Close closes both.
func (c Clone) Close() {
	c.Mount.Close()
	c.Lock.Close()
}

// Clone returns a clone of the home's overlay for one jail.
func (h *Home) Clone() (Clone, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost != nil {
		return Clone{}, h.lost
	}
	c, err := h.clone()
	if err == nil || errors.Is(err, errKeeperRefused) {
		return c, err
	}
	if errors.Is(err, unix.EAGAIN) {
		// The keeper did not answer in time: it is stopped or hung, and
		// holds the keeper lock, so another would not start. Waiting
		// for it again would hang every command.
		h.lost = fmt.Errorf("the keeper of the jail's home does not answer: %w", err)
		return Clone{}, h.lost
	}
	// The connection broke: the keeper ended (this process connected just
	// as it ended, idle) or was killed. Connect again, to a new keeper,
	// once. A new keeper does not mount while a clone of the old one is
	// in use (this process's own included): then the home is lost to this
	// process, whose clones stay good, with their locks; its new jails get
	// a read-only home.
	unix.Close(h.conn)
	if err = h.connect(); err == nil {
		if c, err = h.clone(); err == nil || errors.Is(err, errKeeperRefused) {
			return c, err
		}
		unix.Close(h.conn)
	}
	h.lost = fmt.Errorf("the keeper of the jail's home is gone: %v", err)
	return Clone{}, h.lost
}

var errKeeperRefused = errors.New("the keeper could not clone the home's mount")

func (h *Home) clone() (Clone, error) {
	if err := writeByte(h.conn, proto.KeeperClone); err != nil {
		return Clone{}, err
	}
	var b [5]byte
	oob := make([]byte, unix.CmsgSpace(8))
	var n, oobn int
	var err error
	for {
		// Go's runtime interrupts blocking system calls with its own
		// signals: EINTR is not an answer.
		n, oobn, _, _, err = unix.Recvmsg(h.conn, b[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return Clone{}, os.NewSyscallError("recvmsg", err)
	}
	fds := receivedFDs(oob[:oobn])
	switch {
	case n == 1 && b[0] == proto.KeeperMount && len(fds) == 2:
		return Clone{os.NewFile(uintptr(fds[0]), "wsh-home"), os.NewFile(uintptr(fds[1]), "wsh-home-lock")}, nil
	case n == 5 && b[0] == proto.KeeperFailed:
		closeAll(fds)
		return Clone{}, fmt.Errorf("%w: %w", errKeeperRefused, syscall.Errno(binary.LittleEndian.Uint32(b[1:])))
	}
	closeAll(fds)
	return Clone{}, fmt.Errorf("a bad answer from the keeper (%d bytes)", n)
}

// writeByte writes one byte to the keeper's socket.
func writeByte(c int, b byte) error {
	for {
		_, err := unix.Write(c, []byte{b})
		if err != unix.EINTR {
			return os.NewSyscallError("write", err)
		}
	}
}

// readByte reads one byte from the keeper's socket; 0 at its end.
func readByte(c int) (byte, error) {
	var b [1]byte
	for {
		n, err := unix.Read(c, b[:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, os.NewSyscallError("read", err)
		case n == 0:
			return 0, nil
		}
		return b[0], nil
	}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for _, m := range msgs {
		if fds, err := unix.ParseUnixRights(&m); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// Plan is where the home comes from.
func (h *Home) Plan() HomePlan { return h.plan }

// Release drops one use; the last one closes the connection.
func (h *Home) Release() {
	openHomes.Lock()
	defer openHomes.Unlock()
	if h.refs--; h.refs > 0 {
		return
	}
	delete(openHomes.m, h.plan.Dir())
	if h.lost == nil {
		unix.Close(h.conn)
	}
	if h.shared != nil {
		openHomes.Unlock()
		h.shared.Release()
		openHomes.Lock()
	}
}

// prepare makes the state directory and the home's directories in it,
// owned by this uid and closed to others. The upper directory is the
// overlay's root, whose mode and owner the jail shows as the home's: they
// are set to the home's own.
func (p HomePlan) prepare() error {
	dirs := []string{p.State, filepath.Join(p.State, "home"), p.homeDir()}
	if p.Project != "" {
		dirs = append(dirs, filepath.Join(p.homeDir(), ProjectsDir))
	}
	for _, d := range append(dirs, p.Dir(), p.Work(), filepath.Join(p.Dir(), proto.GensDir)) {
		if err := mkdirPrivate(d); err != nil {
			return err
		}
	}
	if err := p.nameProject(); err != nil {
		return err
	}
	var hst unix.Stat_t
	if err := unix.Stat(p.Home, &hst); err != nil {
		return &os.PathError{Op: "stat", Path: p.Home, Err: err}
	}
	if err := os.Mkdir(p.Upper(), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	var ust unix.Stat_t
	if err := unix.Lstat(p.Upper(), &ust); err != nil || ust.Mode&unix.S_IFMT != unix.S_IFDIR {
		return &os.PathError{Op: "upper directory", Path: p.Upper(), Err: unix.ENOTDIR}
	}
	if ust.Uid != hst.Uid || ust.Gid != hst.Gid {
		if err := unix.Lchown(p.Upper(), int(hst.Uid), int(hst.Gid)); err != nil {
			return &os.PathError{Op: "chown", Path: p.Upper(), Err: err}
		}
	}
	if ust.Mode&0o7777 != hst.Mode&0o7777 {
		if err := unix.Chmod(p.Upper(), hst.Mode&0o7777); err != nil {
			return &os.PathError{Op: "chmod", Path: p.Upper(), Err: err}
		}
	}
	return mkdirPrivate(socketDir())
}

// nameProject writes, once, the project's path and its scope in its
// layer's directory (ProjectFile): wsh home says whose each layer is.
func (p HomePlan) nameProject() error {
	if p.Project == "" {
		return nil
	}
	name := filepath.Join(p.Dir(), ProjectFile)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(p.Project + "\n" + p.Scope + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirPrivate makes dir (mode 0700) unless it is there, and checks that
// it is a directory of this uid, not a symlink, that nobody else can
// write.
func mkdirPrivate(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: dir, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 {
		return &os.PathError{Op: "check", Path: dir, Err: fmt.Errorf("not a directory of uid %d that only it can write", os.Getuid())}
	}
	return nil
}

// dial connects to the home's keeper, through its directory opened
// without symlinks (a socket path is at most 107 bytes; this one is not
// limited so).
func (p HomePlan) dial() (int, error) {
	dir := socketDir()
	home, err := proto.NewPathID(p.Dir())
	if err != nil {
		return -1, err
	}
	name := p.socketName(home.Dev, home.Ino)
	id, err := proto.NewPathID(dir)
	if err != nil {
		return -1, err
	}
	dfd, err := id.Open()
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	c, err := proto.DialKeeper(dfd, name)
	if err != nil {
		return -1, &os.PathError{Op: "connect", Path: filepath.Join(dir, name), Err: err}
	}
	return c, nil
}

// startKeeper starts the keeper of the home in a user and mount namespace
// of its own, as a child that outlives this process (no parent-death
// signal, a session of its own, /dev/null for its streams), and waits
// until it listens or says why it cannot.
func startKeeper(p HomePlan) error {
	spec, err := p.keeperSpec()
	if err != nil {
		return err
	}
	b, _ := spec.Encode()
	sf, err := memFile(b)
	if err != nil {
		return err
	}
	defer sf.Close()
	exe, err := exePath()
	if err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	defer rd.Close()
	files, err := childFiles([3]*os.File{null, null, null}, map[int]*os.File{proto.ReportFD: wr, proto.SpecFD: sf})
	if err != nil {
		wr.Close()
		return err
	}
	pid, err := spawn(exe, []string{proto.KeeperArg0}, []string{}, spawnAttr{
		files:   files,
		flags:   keeperFlags(),
		orphan:  true,
		allCaps: true,
	})
	wr.Close()
	if err != nil {
		return fmt.Errorf("start the home's keeper: %w", err)
	}
	go func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
				return
			}
		}
	}()
	rd.SetReadDeadline(time.Now().Add(10 * time.Second))
	if r, ok := proto.DecodeReport(readSentinel(rd, nil)); ok {
		return &os.SyscallError{Syscall: "the home's keeper: " + r.Step.String(), Err: r.Errno}
	}
	return nil
}

// keeperFlags are the keeper's namespaces: a mount namespace, and a user
// namespace but for root. In a user namespace of its own, every mount the
// host has beneath the home is locked, and the kernel refuses an overlay
// whose lower layer has a locked mount beneath it (it would show what the
// mount hides); root needs no user namespace to mount.
func keeperFlags() uintptr {
	if os.Getuid() == 0 {
		return unix.CLONE_NEWNS
	}
	return unix.CLONE_NEWUSER | unix.CLONE_NEWNS
}

func (p HomePlan) keeperSpec() (*proto.KeeperSpec, error) {
	s := &proto.KeeperSpec{Linger: KeeperLinger, Refresh: KeeperRefresh}
	ids := []struct {
		dst  *proto.PathID
		path string
	}{{&s.Home, p.Home}, {&s.Upper, p.Upper()}, {&s.Work, p.Work()}, {&s.Locks, p.Dir()}, {&s.SocketDir, socketDir()}}
	for _, x := range ids {
		id, err := proto.NewPathID(x.path)
		if err != nil {
			return nil, err
		}
		*x.dst = id
	}
	s.SocketName = p.socketName(s.Locks.Dev, s.Locks.Ino)
	if p.Project != "" {
		shared, err := proto.NewPathID(p.homeDir())
		if err != nil {
			return nil, err
		}
		s.SharedSocketName = p.Shared().socketName(shared.Dev, shared.Ino)
		s.Caches = append([]string(nil), SharedCaches...)
		s.Own = append([]string(nil), OwnInCaches...)
	}
	return s, nil
}

func openLock(dir, name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// A HomeInfo is what wsh home shows.
type HomeInfo struct {
	Plan    HomePlan
	Size    int64 // bytes on disk of what jailed commands wrote
	Keeper  bool  // a keeper is running
	Existed bool  // the home's directory exists
	// Earlier, for the shared layer, lists what it holds besides the
	// caches: what jails wrote before wsh kept a layer per project, which
	// no jail sees any more.
	Earlier []string
}

// Layers lists the layers of plan's home: the shared one first, then
// every project's found in the state directory (a project whose name
// cannot be read is named by its directory).
func Layers(plan HomePlan) []HomePlan {
	out := []HomePlan{plan.Shared()}
	dir := filepath.Join(plan.homeDir(), ProjectsDir)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		l := plan.Shared()
		l.layerDir = filepath.Join(dir, e.Name())
		l.Project = "(unknown: " + l.layerDir + ")"
		if b, err := os.ReadFile(filepath.Join(l.layerDir, ProjectFile)); err == nil && len(b) > 1 {
			// The project's path, then its scope (HomePlan.Scope).
			name, scope, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
			l.Project, l.Scope = name, scope
		}
		out = append(out, l)
	}
	return out
}

// earlierFiles lists the top-level names of the shared layer's upper
// directory that no shared cache lies beneath.
func earlierFiles(p HomePlan) []string {
	if p.Project != "" {
		return nil
	}
	names, _ := readNames(p.Upper())
	var out []string
	for _, n := range names {
		cache := false
		for _, c := range SharedCaches {
			cache = cache || c == n || strings.HasPrefix(c, n+"/")
		}
		if !cache {
			out = append(out, n)
		}
	}
	return out
}

// EarlierSaid is the file, in the home's directory, whose presence says
// that a run has said what the shared layer holds from before per-project
// layers (EarlierUnsaid).
const EarlierSaid = "earlier-said"

// EarlierUnsaid returns, once for the home, what its shared layer holds
// besides the caches (earlierFiles): what jails wrote before wsh kept a
// layer per project, which no jail sees any more. A run says it; later
// runs do not (wsh home always does).
func EarlierUnsaid(plan HomePlan) []string {
	shared := plan.Shared()
	names := earlierFiles(shared)
	if len(names) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(shared.Dir(), EarlierSaid), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil // said before (or it cannot be noted: then not said at every run)
	}
	f.Close()
	return names
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// InspectHome says how much the home holds and whether its keeper runs.
func InspectHome(p HomePlan) HomeInfo {
	info := HomeInfo{Plan: p}
	if _, err := os.Lstat(p.Dir()); err != nil {
		return info
	}
	info.Existed = true
	info.Size = diskUsage(p.Upper())
	info.Earlier = earlierFiles(p)
	if l, err := openLock(p.Dir(), proto.KeeperLockName); err == nil {
		info.Keeper = flock(l, unix.LOCK_SH|unix.LOCK_NB) != nil
		l.Close()
	}
	return info
}

func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		var st unix.Stat_t
		if err == nil && unix.Lstat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// ResetHome empties the home: what every jailed command wrote to it is
// gone. It asks an idle keeper to end and refuses (ErrHomeInUse) while a
// wsh uses the home. It returns the bytes freed. It follows no symlink:
// the home's directory is opened without any (a symlink planted in the
// state directory leads nowhere), and everything in it is removed by
// descriptor.
func ResetHome(p HomePlan) (int64, error) {
	id, err := proto.NewPathID(p.Dir())
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("the home's directory %s: %w", p.Dir(), err)
	}
	dfd, err := id.Open()
	if err != nil {
		return 0, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstat(dfd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return 0, &os.PathError{Op: "check", Path: p.Dir(), Err: fmt.Errorf("not a directory of uid %d", os.Getuid())}
	}
	if c, err := p.dial(); err == nil {
		var b byte
		if err = writeByte(c, proto.KeeperQuit); err == nil {
			b, _ = readByte(c)
		}
		unix.Close(c)
		if b == proto.KeeperBusy {
			return 0, ErrHomeInUse
		}
	}
	locks, err := lockAll(dfd)
	defer closeAll(locks)
	if err != nil {
		return 0, err
	}
	freed := diskUsageAt(dfd, "upper")
	names := []string{"upper", "work", proto.GensDir, EarlierSaid}
	if p.Project != "" {
		// A project's layer goes whole: its next run makes it anew.
		names = append(names, ProjectFile, proto.KeeperLockName)
	}
	for _, name := range names {
		if err := removeAt(dfd, name); err != nil {
			return 0, &os.PathError{Op: "remove", Path: filepath.Join(p.Dir(), name), Err: err}
		}
	}
	if p.Project != "" {
		return freed, os.Remove(p.Dir())
	}
	return freed, p.prepare()
}

// lockAll takes, exclusively, the keeper lock and every generation's lock
// of the home's directory dfd, waiting a little for each: a keeper that
// was asked to end ends at once, and so do the jails of a wsh that was
// killed. ErrHomeInUse if one stays held.
func lockAll(dfd int) ([]int, error) {
	names := []string{proto.KeeperLockName}
	if gfd, err := unix.Openat(dfd, proto.GensDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		d := os.NewFile(uintptr(gfd), proto.GensDir)
		gens, _ := d.Readdirnames(-1)
		d.Close()
		for _, g := range gens {
			names = append(names, proto.GensDir+"/"+g)
		}
	}
	var locks []int
	deadline := time.Now().Add(3 * time.Second)
	for _, name := range names {
		how := &unix.OpenHow{Flags: unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC, Mode: 0o600,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
		l, err := resolve.Open(dfd, name, how)
		if err != nil {
			return locks, &os.PathError{Op: "open", Path: name, Err: err}
		}
		locks = append(locks, l)
		for unix.Flock(l, unix.LOCK_EX|unix.LOCK_NB) != nil {
			if time.Now().After(deadline) {
				return locks, ErrHomeInUse
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return locks, nil
}

// removeAt removes name from the directory dfd, and all it holds, without
// following any symlink. Directories are made writable first: Go's module
// cache makes its directories read-only, and overlayfs leaves a work
// directory of mode 000.
func removeAt(dfd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.Unlinkat(dfd, name, 0)
	}
	pfd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// chmod through the descriptor's own /proc link: the directory opened,
	// not whatever is at the name now.
	unix.Chmod("/proc/self/fd/"+strconv.Itoa(pfd), 0o700)
	fd, err := unix.Openat(pfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	unix.Close(pfd)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	names, err := d.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeAt(fd, n); err != nil {
				break
			}
		}
	}
	d.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
}

// diskUsageAt is what name in dfd, and all it holds, takes on disk.
func diskUsageAt(dfd int, name string) int64 {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	return diskUsage("/proc/self/fd/" + strconv.Itoa(fd) + "/.")
}
