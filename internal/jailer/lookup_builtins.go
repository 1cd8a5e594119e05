//go:build linux && cgo

package jailer

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/interp"
)

// The builtins of mvdan.cc/sh that look paths up themselves, on the host
// (os.Stat, filepath.EvalSymlinks), not through the file handlers: `type`
// and `command -v` of a path, `source NAME`'s search of PATH, `pwd -P`.
// Where the shell's file access is done in the jail (jailedFiles), wsh
// runs them so that they look in the jail; the rest of each (a keyword,
// alias, function or builtin of that name, a bare name's search of PATH
// for type and command -v) is the interpreter's own.

// lookupRename is the name wsh runs a call of one of these builtins as,
// or "" where the interpreter's own does what the jail would.
func lookupRename(args []string) string {
	switch {
	case args[0] == "type":
		return "type"
	case args[0] == "command" && len(args) > 2 && args[1] == "-v":
		return "command-v"
	case (args[0] == "source" || args[0] == ".") && len(args) > 1 && args[1] != "" && !strings.Contains(args[1], "/"):
		return "source"
	case args[0] == "pwd" && len(args) > 1:
		return "pwd"
	}
	return ""
}

// jailStat is stat in the jail, for the lookups (nil: on the host).
func (j *Jailer) jailStat(ctx context.Context) func(string) (fs.FileInfo, error) {
	if !j.jailedFiles() || j.refusedFiles() {
		return nil
	}
	return func(p string) (fs.FileInfo, error) { return j.statFollow(ctx, p) }
}

// typeBuiltin is type: a name with a slash is looked up in the jail; any
// other is the interpreter's type, one name at a time.
func (j *Jailer) typeBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	mode, names := "", args[1:]
	for len(names) > 0 && strings.HasPrefix(names[0], "-") && names[0] != "-" {
		if names[0] == "--" {
			names = names[1:]
			break
		}
		mode, names = names[0], names[1:]
	}
	stat := j.jailStat(ctx)
	if stat == nil || (mode != "" && mode != "-p" && mode != "-P" && mode != "-t") {
		return hc.Builtin(ctx, args) // the interpreter's: its own options, and errors
	}
	var failed bool
	for _, name := range names {
		if !strings.Contains(name, "/") {
			if err := hc.Builtin(ctx, append(optArgs("type", mode), name)); err != nil {
				failed = true
			}
			continue
		}
		path, err := lookPath(hc.Dir, hc.Env, name, nil, stat)
		switch {
		case err != nil:
			if mode != "-t" && mode != "-p" && mode != "-P" {
				fmt.Fprintf(hc.Stderr, "type: %s: not found\n", name)
			}
			failed = true
		case mode == "-t":
			fmt.Fprintln(hc.Stdout, "file")
		case mode == "-p" || mode == "-P":
			fmt.Fprintln(hc.Stdout, path)
		default:
			fmt.Fprintf(hc.Stdout, "%s is %s\n", name, path)
		}
	}
	if failed {
		return interp.ExitStatus(1)
	}
	return nil
}

func optArgs(name, mode string) []string {
	if mode == "" {
		return []string{name}
	}
	return []string{name, mode}
}

// commandV is command -v: a name with a slash is looked up in the jail;
// any other is the interpreter's command -v. The status is the last
// name's.
func (j *Jailer) commandV(ctx context.Context, hc interp.HandlerContext, args []string) error {
	stat := j.jailStat(ctx)
	if stat == nil {
		return hc.Builtin(ctx, append([]string{"command"}, args[1:]...))
	}
	var last error
	for _, name := range args[2:] {
		if !strings.Contains(name, "/") {
			last = hc.Builtin(ctx, []string{"command", "-v", name})
			continue
		}
		path, err := lookPath(hc.Dir, hc.Env, name, nil, stat)
		if err != nil {
			last = interp.ExitStatus(1)
			continue
		}
		fmt.Fprintln(hc.Stdout, path)
		last = nil
	}
	return last
}

// sourceBuiltin is source NAME (no slash in NAME): NAME is looked for in
// PATH in the jail, as a file that is not a directory, and then, as
// bash and the interpreter do, in the working directory; the
// interpreter's source then reads what was found, through the jail.
func (j *Jailer) sourceBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	stat := j.jailStat(ctx)
	if stat == nil {
		return hc.Builtin(ctx, args)
	}
	found := "./" + args[1]
	for _, elem := range filepath.SplitList(hc.Env.Get("PATH").String()) {
		if elem == "" || elem == "." {
			continue // the working directory comes last, as found
		}
		p := filepath.Join(elem, args[1])
		if !filepath.IsAbs(p) {
			p = filepath.Join(hc.Dir, p)
		}
		if fi, err := stat(p); err == nil && !fi.IsDir() {
			found = p
			break
		}
	}
	return hc.Builtin(ctx, append([]string{args[0], found}, args[2:]...))
}

// pwdBuiltin is pwd: with -P (the last of -L and -P), $PWD resolved in
// the jail; else the interpreter's.
func (j *Jailer) pwdBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	physical := false
	for _, a := range args[1:] {
		switch a {
		case "-P":
			physical = true
		case "-L":
			physical = false
		default:
			return hc.Builtin(ctx, args) // its own message for a bad option
		}
	}
	if !physical || !j.jailedFiles() || j.refusedFiles() {
		return hc.Builtin(ctx, args)
	}
	real, err := j.resolveIn(ctx, hc.Env.Get("PWD").String())
	if err != nil {
		fmt.Fprintf(hc.Stderr, "wsh: pwd: %v\n", shellError(hc.Env.Get("PWD").String(), err).(*fs.PathError).Err)
		return interp.ExitStatus(1)
	}
	fmt.Fprintln(hc.Stdout, real)
	return nil
}
