//go:build linux && cgo

package builtins

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// A LookupError is a command that cannot be run, with bash's status and
// message.
type LookupError struct {
	Status uint8
	Msg    string
}

func (e *LookupError) Error() string { return e.Msg }

// LookPath finds name as bash does: a name with a slash is taken as a path;
// otherwise the first executable regular file in $PATH wins, and a
// non-executable match is "Permission denied" only when nothing better is
// found. A path for which hidden is true is "Permission denied" without a
// look, as a path beneath the jail's unreadable mount is; a $PATH entry
// that is hidden is passed over. stat stats a path (following symlinks)
// where the jail finds it: nil is os.Stat.
func LookPath(dir string, env expand.Environ, name string, hidden func(string) bool, stat func(string) (fs.FileInfo, error)) (string, error) {
	if hidden == nil {
		hidden = func(string) bool { return false }
	}
	if stat == nil {
		stat = os.Stat
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = dir + "/" + p
		}
		if hidden(p) {
			return "", &LookupError{126, name + ": Permission denied"}
		}
		return filepath.Clean(p), checkExecutable(stat, p, name)
	}
	var denied string
	for _, elem := range filepath.SplitList(env.Get("PATH").String()) {
		if elem == "" {
			elem = "."
		}
		p := filepath.Join(elem, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if hidden(p) {
			continue
		}
		switch err := checkExecutable(stat, p, name); {
		case err == nil:
			return p, nil
		case err.(*LookupError).Status == 126 && denied == "":
			fi, _ := stat(p)
			if fi != nil && !fi.IsDir() {
				denied = p
			}
		}
	}
	if denied != "" {
		return "", &LookupError{126, name + ": Permission denied"}
	}
	return "", &LookupError{127, name + ": command not found"}
}

func checkExecutable(stat func(string) (fs.FileInfo, error), p, name string) error {
	fi, err := stat(p)
	switch {
	case err != nil:
		return &LookupError{127, name + ": No such file or directory"}
	case fi.IsDir():
		return &LookupError{126, name + ": Is a directory"}
	case fi.Mode()&0o111 == 0:
		return &LookupError{126, name + ": Permission denied"}
	}
	return nil
}
