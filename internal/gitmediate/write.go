//go:build linux && cgo

package gitmediate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"wsh/internal/paths"
	"wsh/internal/proto"
)

// mediate makes the rename c onto the protected config host (dst its
// identity, dir its directory in the jail's view) as a write of the
// host's file in place, or refuses it. It returns the caller's errno.
func (m *Mediator) mediate(listener int, req *proto.SeccompNotif, c renameCall, dir int, host string, dst unix.Stat_t) unix.Errno {
	if c.flags&unix.RENAME_NOREPLACE != 0 {
		return unix.EEXIST // the config is there
	}
	if c.flags != 0 {
		return unix.EPERM // RENAME_WHITEOUT: nothing git does
	}
	pid := int(req.Pid)
	oldPath, err := readCString(pid, c.oldPtr)
	if errno, ok := err.(unix.Errno); ok {
		return errno // EFAULT, ENAMETOOLONG: as the kernel would say
	} else if err != nil {
		return unix.EFAULT
	}
	sdir, sname, err := openParent(pid, c.oldDir, oldPath)
	if err != nil {
		m.say(host, "", fmt.Sprintf("its new content %s could not be found in the jail's view (%v)", oldPath, err))
		return unix.EPERM
	}
	defer unix.Close(sdir)
	var a, b unix.Stat_t
	if unix.Fstat(sdir, &a) != nil || unix.Fstat(dir, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		m.say(host, "", fmt.Sprintf("its new content %s is not in the config's directory", oldPath))
		return unix.EPERM
	}
	content, src, err := readLockFile(sdir, sname)
	if err == nil && (src.Dev == dst.Dev && src.Ino == dst.Ino || m.isConfig(src)) {
		err = fmt.Errorf("is a protected config itself")
	}
	if err != nil {
		m.say(host, "", fmt.Sprintf("its new content %s %v", oldPath, err))
		return unix.EPERM
	}
	// The caller is still the one whose memory and /proc were read.
	if !idValid(listener, req.ID) {
		return unix.EPERM
	}
	if err := m.write(host, dst, content); err != nil {
		return unix.EPERM
	}
	var now unix.Stat_t
	if unix.Fstatat(sdir, sname, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == src.Dev && now.Ino == src.Ino {
		unix.Unlinkat(sdir, sname, 0)
	}
	return 0
}

// readLockFile reads the source of a rename onto a config: a regular
// file (not a symlink, FIFO or device), of wsh's uid, with one link (not
// a hard link to a file elsewhere), of at most MaxConfig bytes, and no
// mount point of the jail's (a protected file, bound onto itself): wsh
// removes the source once it wrote the config, and in wsh's mount
// namespace, where the jail's binds are none, the kernel would let it
// remove the host's file under the bind, the protection with it.
func readLockFile(dir int, name string) ([]byte, unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, st, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st, fmt.Errorf("is not a regular file")
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, st, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, st, err
	}
	if mounted, err := mountPointIn(dir, fd); err != nil || mounted {
		return nil, st, fmt.Errorf("is a mount point of the jail's (a protected path)")
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, st, fmt.Errorf("is not a regular file")
	case st.Nlink != 1:
		return nil, st, fmt.Errorf("has %d links (a file linked from elsewhere)", st.Nlink)
	case int(st.Uid) != os.Geteuid():
		return nil, st, fmt.Errorf("is another user's")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxConfig+1))
	if err != nil {
		return nil, st, err
	}
	if len(b) > MaxConfig {
		return nil, st, fmt.Errorf("has more than %d bytes", MaxConfig)
	}
	return b, st, nil
}

// write writes content into the host's config host (the file of identity
// dst) in place, if every entry it adds or changes is allowed (gitKeyRefusal);
// otherwise it says each refused key and leaves the file as it was.
func (m *Mediator) write(host string, dst unix.Stat_t, content []byte) error {
	f, err := os.OpenFile(host, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		m.say(host, "", fmt.Sprintf("it could not be opened on the host (%v)", err))
		return errRefused
	}
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Dev != dst.Dev || st.Ino != dst.Ino {
		m.say(host, "", "it is no longer the file the jail protects")
		return errRefused
	}
	old, err := io.ReadAll(io.LimitReader(f, MaxConfig+1))
	if err != nil {
		m.say(host, "", fmt.Sprintf("it could not be read (%v)", err))
		return errRefused
	}
	oldE, err := gitEntries(old)
	if err != nil {
		m.say(host, "", fmt.Sprintf("git cannot read the host's config (%v)", err))
		return errRefused
	}
	newE, err := gitEntries(content)
	if err != nil {
		m.say(host, "", fmt.Sprintf("git cannot read the new content (%v)", err))
		return errRefused
	}
	if refused := refusedEntries(oldE, newE); len(refused) > 0 {
		for _, r := range refused {
			m.say(host, r.Key, r.Why)
		}
		return errRefused
	}
	// Emptied, then written: a host git that reads it meanwhile sees a
	// part of the new content, never the new spliced with the old.
	if err = replaceContent(f, content); err != nil {
		// A full disk (a command can fill it): the old content back.
		if rerr := replaceContent(f, old); rerr != nil {
			m.say(host, "", fmt.Sprintf("it could not be written (%v), nor its old content put back (%v): it is left as it is now; its old content was:\n%s", err, rerr, old))
			return errRefused
		}
		m.say(host, "", fmt.Sprintf("it could not be written (%v); its old content is back", err))
		return errRefused
	}
	for _, e := range newE {
		if p := gitKeyPattern(e.key); (p == "remote.*.url" || p == "remote.*.pushurl") && !slices.Contains(oldE, e) {
			// Allowed, and where the host's next fetch or push goes.
			fmt.Fprintf(m.warn, "wsh: wrote %s = %s to %s: the host's next git fetch or push there goes to it\n", paths.Shown(e.key), paths.Shown(e.value), paths.Shown(host))
		}
	}
	return nil
}

// replaceContent makes content f's content, in place.
func replaceContent(f *os.File, content []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return err
	}
	return f.Sync()
}

// say tells the user why a write of a config was refused.
func (m *Mediator) say(host, key, why string) {
	if key != "" {
		why = paths.Shown(key) + " " + why
	}
	fmt.Fprintf(m.warn, "wsh: refused a write of %s: %s\n", paths.Shown(host), why)
}

// A gitEntry is one entry of a config as git lists it: the key (section
// and name in lower case, a subsection as written) and its value (none
// for a bare key).
type gitEntry struct {
	key, value string
	bare       bool
}

// hostGit is the system's git, which wsh runs on the host to read a
// config: a root-owned file that only root can change, in a system
// directory, never one found on wsh's PATH (which may name a directory
// a command can write, ./node_modules/.bin).
var hostGit = sync.OnceValues(func() (string, error) {
	for _, p := range []string{"/usr/bin/git", "/bin/git", "/usr/local/bin/git"} {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Uid == 0 && st.Mode&0o022 == 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no git of the system's (/usr/bin/git, owned by root) to read it with")
})

// gitEntries is what git itself reads in a config's content (git config
// --list, includes not followed): wsh judges the entries of git's own
// parser, so that no line means one thing to wsh and another to git.
func gitEntries(content []byte) ([]gitEntry, error) {
	if len(bytes.TrimSpace(content)) == 0 {
		return nil, nil
	}
	git, err := hostGit()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "config", "--no-includes", "--file", "-", "--list", "-z")
	cmd.Stdin = bytes.NewReader(content)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent", "LC_ALL=C"}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	var es []gitEntry
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		k, v, hasValue := strings.Cut(rec, "\n")
		es = append(es, gitEntry{key: k, value: v, bare: !hasValue})
	}
	return es, nil
}

// mountPointIn says whether fd, opened in the directory dir, is on
// another mount than dir: a mount point (statx's mount ids).
func mountPointIn(dir, fd int) (bool, error) {
	var a, b unix.Statx_t
	if err := unix.Statx(dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &a); err != nil {
		return false, err
	}
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &b); err != nil {
		return false, err
	}
	if a.Mask&b.Mask&unix.STATX_MNT_ID == 0 {
		return false, fmt.Errorf("no mount id")
	}
	return a.Mnt_id != b.Mnt_id, nil
}
