//go:build linux && cgo

package paths

import (
	"os"
	"path/filepath"
	"slices"

	"wsh/config"

	"golang.org/x/sys/unix"
)

func writablePaths(cfg config.Config, dir string, environ []string) ([]string, error) {
	w, _, err := WritableAndWhy(cfg, dir, environ, nil)
	return w, err
}

// WritableAndWhy returns the writable paths, and, when the start directory
// is not one of them, why. The start directory, $TMPDIR and /tmp are
// writable by default; but never the root, a system directory, the home
// itself (the jail's home is copy-on-write, or read-only), or /root for a
// user other than root, unless WSH_WRITABLE names it: starting wsh in /etc
// must not make /etc writable.
//
// real, where not nil, holds the resolutions of the start directory and
// $TMPDIR that CheckGround checked: those are used, not resolved again.
func WritableAndWhy(cfg config.Config, dir string, environ []string, real map[string]string) (out []string, why string, err error) {
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	evalSymlinks := func(p string) (string, error) {
		if real == nil {
			return filepath.EvalSymlinks(p)
		}
		if r := real[p]; r != "" {
			return r, nil
		}
		// The check could not resolve it (it changed under the walk):
		// no second resolution.
		return "", &os.PathError{Op: "resolve", Path: p, Err: unix.ENOENT}
	}
	d, err := evalSymlinks(dir)
	if err != nil || !filepath.IsAbs(d) {
		if _, cerr := config.CheckWritable(dir); cerr != nil {
			err = cerr
		}
		return nil, "", &config.Error{Var: "the working directory", Err: err}
	}
	home := ""
	if h, _ := LookupEnv(environ, "HOME"); filepath.IsAbs(h) {
		home, _ = filepath.EvalSymlinks(h)
	}
	notByDefault := func(p string) string { return NotWritableByDefault(p, home) }
	if why = notByDefault(d); why == "" {
		add(d)
	}
	if t, err := config.CheckWritable("/tmp"); err == nil {
		add(t)
	}
	if t, _ := LookupEnv(environ, "TMPDIR"); t != "" {
		// TMPDIR is a default, not a request: one that does not exist is
		// left out, as it is unusable outside the jail too.
		r, err := evalSymlinks(t)
		if err == nil {
			// As checked: CheckWritable resolves what it is given, so a
			// path it gives back otherwise changed since the check.
			var c string
			if c, err = config.CheckWritable(r); err == nil && c != r {
				return nil, "", &config.GroundError{What: "TMPDIR", Path: t, Why: "resolved to " + r +
					" and now to " + c + ": it changed as wsh started; wsh never makes writable a path it did not check"}
			}
		}
		if err == nil && notByDefault(r) == "" {
			add(r)
		}
	}
	for _, p := range cfg.Writable {
		add(p)
	}
	for _, w := range out {
		if Under(d, w) {
			why = "" // writable all the same (it lies in /tmp, say)
		}
	}
	return out, why, nil
}

// NotWritableByDefault says why p, a resolved directory, is not made
// writable for being the start directory or $TMPDIR, or "". The root and
// everything beneath a system directory is the system's (starting wsh in
// /etc/cron.d must not let a command add a cron job), but for the
// temporary and web directories of /var; the home itself is copy-on-write
// in the jail; a directory that holds the home (/home) would make the
// home and its rc files writable; /home and /root hold homes.
func NotWritableByDefault(p, home string) string {
	switch {
	case p == "/":
		return "/ is a system directory"
	case home != "" && Under(home, p) && p != home:
		return p + " holds the home directory " + home
	case p == home:
		return p + " is the home directory"
	case p == "/home" || p == "/root" || Under(p, "/root") && os.Getuid() != 0:
		return p + " is where homes are"
	case Under(p, "/var/tmp") || Under(p, "/var/www"):
		return ""
	}
	for d := range systemDirs {
		if d != "/" && Under(p, d) && (!lenientDirs[d] || p == d) {
			return p + " is a system directory"
		}
	}
	return ""
}

// lenientDirs are system directories whose own subdirectories may be a
// project's: /opt/app, /srv/site.
var lenientDirs = map[string]bool{"/opt": true, "/srv": true}
