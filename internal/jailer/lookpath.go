//go:build linux && cgo

package jailer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// A lookupError is a command that cannot be run, with bash's status and
// message.
type lookupError struct {
	status uint8
	msg    string
}

func (e *lookupError) Error() string { return e.msg }

// lookPath finds name as bash does: a name with a slash is taken as a path;
// otherwise the first executable regular file in $PATH wins, and a
// non-executable match is "Permission denied" only when nothing better is
// found. A path for which hidden is true is "Permission denied" without a
// look, as a path beneath the jail's unreadable mount is; a $PATH entry
// that is hidden is passed over. stat stats a path (following symlinks)
// where the jail finds it: nil is os.Stat.
func lookPath(dir string, env expand.Environ, name string, hidden func(string) bool, stat func(string) (fs.FileInfo, error)) (string, error) {
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
			return "", &lookupError{126, name + ": Permission denied"}
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
		case err.(*lookupError).status == 126 && denied == "":
			fi, _ := stat(p)
			if fi != nil && !fi.IsDir() {
				denied = p
			}
		}
	}
	if denied != "" {
		return "", &lookupError{126, name + ": Permission denied"}
	}
	return "", &lookupError{127, name + ": command not found"}
}

func checkExecutable(stat func(string) (fs.FileInfo, error), p, name string) error {
	fi, err := stat(p)
	switch {
	case err != nil:
		return &lookupError{127, name + ": No such file or directory"}
	case fi.IsDir():
		return &lookupError{126, name + ": Is a directory"}
	case fi.Mode()&0o111 == 0:
		return &lookupError{126, name + ": Permission denied"}
	}
	return nil
}

// execEnv is the environment a command gets: the exported string variables,
// as the interpreter holds them.
func execEnv(env expand.Environ) []string {
	var list []string
	seen := map[string]int{}
	for name, vr := range env.Each {
		i, dup := seen[name]
		keep := vr.IsSet() && vr.Exported && vr.Kind == expand.String && !strings.HasPrefix(name, privatePrefix)
		switch {
		case dup && keep:
			list[i] = name + "=" + vr.String()
		case dup:
			list[i] = ""
		case keep:
			seen[name] = len(list)
			list = append(list, name+"="+vr.String())
		}
	}
	out := list[:0]
	for _, kv := range list {
		if kv != "" {
			out = append(out, kv)
		}
	}
	return out
}
