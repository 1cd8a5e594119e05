//go:build linux && cgo

package protect

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A ledger lists the placeholders each run made, so that those a run
// could not remove (wsh killed with SIGKILL, or another run still held
// one) are removed by a later run of the same user. It is a directory of
// one file per run, named PID-START-N (the process's pid and start time,
// and the run's number in it), a line per placeholder; a run that ended
// and kept some renames its file to NAME.closed. A later run removes each
// placeholder of a file whose process is gone, or that is closed, as the
// run would have (removePlaceholder), and keeps those still held.
type ledger struct {
	dir       string // "" for none
	name      string // this run's file, in dir
	f         *os.File
	startTime func(pid int) (uint64, error) // a process's start time: KeepLedgers
}

var ledgerSeq atomic.Int64

const closedSuffix = ".closed"

// ledgerDir is where a run keeps its ledger: in wsh's state directory
// state when there is one, else in a directory of this user's in
// /dev/shm (which every jail has of its own), which is not kept across
// a reboot.
func ledgerDir(state string) string {
	if state != "" {
		return filepath.Join(state, "placeholders")
	}
	return fmt.Sprintf("/dev/shm/wsh-placeholders-%d", os.Geteuid())
}

func newLedger(dir string, startTime func(pid int) (uint64, error)) *ledger {
	l := &ledger{dir: dir, startTime: startTime}
	if dir == "" {
		return l
	}
	if start, err := startTime(os.Getpid()); err == nil {
		l.name = fmt.Sprintf("%d-%d-%d", os.Getpid(), start, ledgerSeq.Add(1))
	}
	return l
}

// usable makes dir if it is missing and checks that it is a directory of
// this user's that no one else can write to.
func (l *ledger) usable() error {
	if l.dir == "" || l.name == "" {
		return errors.New("no ledger")
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(l.dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is not a directory of this user's that only it can write to", l.dir)
	}
	return nil
}

// add notes m in this run's file.
func (l *ledger) add(m madePlaceholder) error {
	if l.f == nil {
		if err := l.usable(); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(l.dir, l.name), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		l.f = f
	}
	_, err := l.f.WriteString(formatEntry(m))
	return err
}

func formatEntry(m madePlaceholder) string {
	return fmt.Sprintf("%d %d %s\n", m.id.dev, m.id.ino, strconv.Quote(m.path))
}

func parseEntry(line string) (madePlaceholder, bool) {
	var m madePlaceholder
	f := strings.SplitN(line, " ", 3)
	if len(f) != 3 {
		return m, false
	}
	var err [3]error
	m.id.dev, err[0] = strconv.ParseUint(f[0], 10, 64)
	m.id.ino, err[1] = strconv.ParseUint(f[1], 10, 64)
	m.path, err[2] = strconv.Unquote(f[2])
	return m, errors.Join(err[:]...) == nil && filepath.IsAbs(m.path)
}

// close ends this run's file: removed, or with kept (the placeholders the
// run could not remove) left for a later run, as NAME.closed.
func (l *ledger) close(kept []madePlaceholder) {
	if l.f == nil {
		return
	}
	l.f.Close()
	l.f = nil
	path := filepath.Join(l.dir, l.name)
	if len(kept) == 0 {
		os.Remove(path)
		return
	}
	var b strings.Builder
	for _, m := range kept {
		b.WriteString(formatEntry(m))
	}
	if os.WriteFile(path, []byte(b.String()), 0o600) == nil {
		os.Rename(path, path+closedSuffix)
	}
}

// sweep removes what the files of runs that are gone, or closed, list.
func (l *ledger) sweep() {
	if l.dir == "" || l.usable() != nil {
		return
	}
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Name() != l.name && e.Type().IsRegular() && runGone(e.Name(), l.startTime) {
			sweepFile(filepath.Join(l.dir, e.Name()))
		}
	}
}

// runGone says that the file name is a closed run's, or one whose process
// is gone (or another process has its pid now: the start time differs).
func runGone(name string, startTime func(pid int) (uint64, error)) bool {
	if strings.HasSuffix(name, closedSuffix) {
		return true
	}
	f := strings.Split(name, "-")
	if len(f) != 3 {
		return false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return false
	}
	now, err := startTime(pid)
	return err != nil || now != start
}

// sweepFile removes the placeholders path lists, under an exclusive lock
// on the file (two runs starting at once do not both rewrite it), and
// the file once it lists none.
func sweepFile(path string) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	var kept []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m, ok := parseEntry(sc.Text())
		if ok && removeListed(m) == placeholderBusy {
			kept = append(kept, sc.Text()+"\n")
		}
	}
	if len(kept) == 0 {
		os.Remove(path)
		return
	}
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strings.Join(kept, "")), 0)
	}
}

// removeListed removes the placeholder m of a run that is gone.
func removeListed(m madePlaceholder) removal {
	fd, err := unix.Open(m.path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return placeholderRemoved
		}
		return placeholderKept
	}
	f := os.NewFile(uintptr(fd), m.path)
	defer f.Close()
	return removePlaceholder(m, f)
}
