package shell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"wsh/jail"
)

// NewInterp makes an interp.Runner whose commands go through this Jailer:
// RunnerOptions, plus the interpreter's own temporary directory set to
// wsh's. environ is its environment; params, if any, are applied as `set`
// would (-e, -o pipefail, --, args).
//
// mvdan.cc/sh opens "$TMPDIR/sh-interp-*" itself, without the open handler
// and following symlinks, so a command that put a symlink by that name in
// $TMPDIR would turn a redirection into a write anywhere. The interpreter
// therefore uses a directory of wsh's own for its FIFOs, read-only in the
// jail; the script and its commands still see the TMPDIR they were given.
func (j *Jailer) NewInterp(environ []string, params []string, opts ...interp.RunnerOption) (*interp.Runner, error) {
	orig, hadTmp := lookupEnvOK(environ, "TMPDIR")
	ienv := environ
	if j.fifoDir != "" {
		ienv = append(withoutEnv(environ, "TMPDIR"), "TMPDIR="+j.fifoDir)
	}
	opts = append([]interp.RunnerOption{interp.Env(expand.ListEnviron(ienv...))}, opts...)
	r, err := interp.New(append(opts, j.RunnerOptions()...)...)
	if err != nil {
		return nil, err
	}
	if j.fifoDir != "" {
		r.Reset() // takes TMPDIR as its temporary directory, once
		restore := "unset TMPDIR"
		if hadTmp {
			restore = "export TMPDIR=" + quote(orig)
		}
		stmt, err := syntax.NewParser().Parse(strings.NewReader(restore), "")
		if err != nil {
			return nil, err
		}
		if err := r.Run(context.Background(), stmt.Stmts[0]); err != nil {
			return nil, err
		}
	}
	if params != nil {
		if err := interp.Params(params...)(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Close removes what the Jailer made on the host (its FIFO directory).
// The per-uid directory above it stays, for the other sessions.
func (j *Jailer) Close() error {
	if j.fifoDir == "" {
		return nil
	}
	return os.RemoveAll(j.fifoDir)
}

// makeFifoDir makes the interpreter's temporary directory inside one
// directory per uid, $TMPDIR/wsh-UID, which every jail of this uid binds
// read-only: a command jailed in another session cannot put a symlink in
// this session's directory either. It returns the per-uid directory and the
// new one.
func makeFifoDir() (jail.PathID, string, error) {
	base := filepath.Join(os.TempDir(), "wsh-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return jail.PathID{}, "", err
	}
	// It must be wsh's own: this uid's directory, not a symlink, closed
	// to others.
	var st unix.Stat_t
	if err := unix.Lstat(base, &st); err != nil {
		return jail.PathID{}, "", &os.PathError{Op: "lstat", Path: base, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return jail.PathID{}, "", fmt.Errorf("%s is not a directory of uid %d closed to others; remove it", base, os.Getuid())
	}
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		return jail.PathID{}, "", err
	}
	id, err := jail.NewPathID(real)
	if err != nil {
		return jail.PathID{}, "", err
	}
	dir, err := os.MkdirTemp(real, "r-")
	return id, dir, err
}

func lookupEnvOK(environ []string, key string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func withoutEnv(environ []string, key string) []string {
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
