//go:build linux && cgo

package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/internal/job"
	"wsh/internal/proto"
	"wsh/internal/umask"
	"wsh/internal/unsupported"
)

// runScript runs a file the kernel refused with ENOEXEC (a script without a
// #! line) as a shell script, as POSIX asks, in a new interpreter whose
// commands go through this same Jailer: degraded or opted out, where
// commands run unsandboxed anyway. (Jailed: runScriptJailed.)
func (j *Jailer) runScript(ctx context.Context, c *command) error {
	b, err := j.readOnHost(ctx, c.path)
	if err != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
		return interp.ExitStatus(126)
	}
	if line, _, _ := bytes.Cut(b, []byte("\n")); bytes.IndexByte(line, 0) >= 0 {
		fmt.Fprintf(c.hc.Stderr, "wsh: %s: cannot execute binary file\n", c.args[0])
		return interp.ExitStatus(126)
	}
	file, err := syntax.NewParser().Parse(bytes.NewReader(b), c.args[0])
	if err == nil {
		err = unsupported.Check(file)
	}
	if err != nil {
		fmt.Fprintf(c.hc.Stderr, "wsh: %v\n", err)
		return interp.ExitStatus(2)
	}
	var own []string
	if c.rc != nil && c.rc.job != "" {
		own = []string{job.BackgroundVar + "=", job.JobVar + "=" + c.rc.job} // the job's own commands
	}
	if m, ok := umask.Script(c.hc); ok {
		own = append(own, fmt.Sprintf("%s=%04o", umask.Var, m)) // the script's umask
	}
	r, err := j.newInterp(c.env, own, append([]string{"--"}, c.args[1:]...),
		interp.Dir(c.hc.Dir),
		interp.StdIO(c.hc.Stdin, c.hc.Stdout, c.hc.Stderr),
	)
	if err != nil {
		return err
	}
	job.Mark(file)
	err = r.Run(ctx, file)
	if _, ok := errors.AsType[interp.ExitStatus](err); ok || err == nil || ctx.Err() != nil || errors.Is(err, proto.ErrInterrupted) || errors.Is(err, errFailedClosed) {
		return err
	}
	fmt.Fprintf(c.hc.Stderr, "wsh: %s: %v\n", c.args[0], err)
	return interp.ExitStatus(1)
}

// maxScript bounds a script that wsh reads itself (16 MiB).
const maxScript = 16 << 20

// runScriptJailed runs a file that the jail refused with ENOEXEC (no #!)
// with a shell given the file as its first operand, as bash does: the
// jail's bash (/bin/bash) when it has one, else its /bin/sh (POSIX),
// in a jail of its own. Not wsh's interpreter: the file may
// have been written by a jailed command, and wsh's interpreter would run
// its builtins and redirections in wsh's own process, with the host's view
// (its /proc, /run), blocking on a FIFO for ever.
func (j *Jailer) runScriptJailed(ctx context.Context, c *command) error {
	script := c.path
	if strings.Contains(c.args[0], "/") {
		script = c.args[0] // as typed: $0 is what bash would show
	}
	sh := &command{hc: c.hc, path: "/bin/sh", env: c.env, of: c, rc: c.rc,
		args: append([]string{"sh", "-c", enoexecSh, c.args[0], script}, c.args[1:]...)}
	return j.jailed(ctx, sh)
}

// enoexecSh runs $1 with /bin/bash (or /bin/sh) and the remaining
// arguments, unless it cannot be read or its first line has a NUL byte
// (a binary for something else): 126, as bash.
const enoexecSh = `p=$1; shift
if ! [ -r "$p" ]; then echo "wsh: $0: Permission denied" >&2; exit 126; fi
n=$(head -n 1 -- "$p" | wc -c); c=$(head -n 1 -- "$p" | tr -d '\000' | wc -c)
if [ "$n" != "$c" ]; then echo "wsh: $0: cannot execute binary file" >&2; exit 126; fi
if [ -x /bin/bash ]; then exec /bin/bash -- "$p" "$@"; fi
exec /bin/sh -- "$p" "$@"`

// readOnHost reads a script, degraded or opted out: only a regular file,
// with read(2) on a descriptor opened without blocking (not through Go's
// poller, which would wait on a pollable file that never has data), at
// most maxScript of it; opened in the jail where the shell's file access
// is (the landlock rung), else on the host.
func (j *Jailer) readOnHost(ctx context.Context, path string) ([]byte, error) {
	var fd int
	if j.jailedFiles() {
		f, err := j.files.OpenIn(ctx, path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: proto.UnwrapErrno(err)}
		}
		defer f.Close()
		fd = int(f.Fd())
	} else {
		var err error
		if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		defer unix.Close(fd)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return nil, &os.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	case st.Size > maxScript:
		return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
	}
	var b []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		case len(b)+n > maxScript:
			return nil, &os.PathError{Op: "read", Path: path, Err: syscall.EFBIG}
		}
		b = append(b, buf[:n]...)
	}
}
