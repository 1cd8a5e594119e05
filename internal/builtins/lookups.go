//go:build linux && cgo

package builtins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/interp"
)

// The builtins of mvdan.cc/sh that look paths up themselves, on the host
// (os.Stat, filepath.EvalSymlinks), not through the file handlers: `type`
// and `command -v` of a path, `source NAME`'s search of PATH, `pwd -P`.
// Where the shell's file access is done in the jail (Core.JailedFiles), wsh
// runs them so that they look in the jail; the rest of each (a keyword,
// alias, function or builtin of that name, a bare name's search of PATH
// for type and command -v) is the interpreter's own.

// lookupRename is where in args the call of one of these builtins is
// (past any builtin and command words before it), and the name wsh runs
// it as ("" where the interpreter's own does what the jail would): type or
// command -v with a name that has a slash, source of a name without one,
// pwd -P; all of them where no jail may do it (refused: they fail closed
// then, rather than look on the host). A function of the script's named
// type, command, source or pwd is not seen for such a call.
func lookupRename(args []string, refused bool) (int, string) {
	i := 0
	for i+1 < len(args) && (args[i] == "builtin" || args[i] == "command" && !strings.HasPrefix(args[i+1], "-")) {
		i++
	}
	flags, names := splitFlags(args[i+1:])
	slash := slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "/") })
	switch args[i] {
	case "type":
		if slash || refused {
			return i, "type"
		}
	case "command":
		if strings.ContainsAny(flags, "vV") && (slash || refused) {
			return i, "command-v"
		}
	case "source", ".":
		if len(args) > i+1 && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") && !strings.Contains(args[i+1], "/") {
			return i, "source"
		}
	case "pwd":
		if strings.Contains(flags, "P") {
			return i, "pwd"
		}
	}
	return i, ""
}

// splitFlags splits a builtin's arguments as the interpreter does: the
// letters of its options ("-pt" is p and t), up to "--" or the first
// word that is not one, and the names after.
func splitFlags(args []string) (flags string, names []string) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		if args[0] == "--" {
			return flags, args[1:]
		}
		flags += args[0][1:]
		args = args[1:]
	}
	return flags, args
}

// refusedLookup fails a lookup closed: no jail to look in.
func (bs *Set) refusedLookup(ctx context.Context, name string) error {
	return bs.core.Refuse(ctx, name)
}

// jailStat is stat in the jail, for the lookups (nil: on the host).
func (bs *Set) jailStat(ctx context.Context) func(string) (fs.FileInfo, error) {
	if !bs.core.JailedFiles() || bs.core.RefusedFiles() {
		return nil
	}
	return func(p string) (fs.FileInfo, error) { return bs.core.StatFollow(ctx, p) }
}

// typeBuiltin is type: a name with a slash is looked up in the jail; any
// other is the interpreter's type, one name at a time. -a and -f are the
// interpreter's (it has neither).
func (bs *Set) typeBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	flags, names := splitFlags(args[1:])
	if bs.core.RefusedFiles() {
		return bs.refusedLookup(ctx, strings.Join(names, " "))
	}
	mode := ""
	for _, f := range flags {
		switch f {
		case 'p', 'P', 't':
			mode = "-" + string(f)
		default:
			return hc.Builtin(ctx, args) // -a, -f, a bad option: its own message
		}
	}
	stat := bs.jailStat(ctx)
	var failed bool
	for _, name := range names {
		if !strings.Contains(name, "/") || stat == nil {
			if err := hc.Builtin(ctx, append(optArgs("type", mode), "--", name)); err != nil {
				failed = true
			}
			continue
		}
		path, err := LookPath(hc.Dir, hc.Env, name, nil, stat)
		switch {
		case err != nil:
			if mode == "" {
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
func (bs *Set) commandV(ctx context.Context, hc interp.HandlerContext, args []string) error {
	flags, names := splitFlags(args[1:])
	if bs.core.RefusedFiles() {
		return bs.refusedLookup(ctx, strings.Join(names, " "))
	}
	stat := bs.jailStat(ctx)
	if stat == nil || strings.Trim(flags, "v") != "" {
		return hc.Builtin(ctx, append([]string{"command"}, args[1:]...)) // its own message
	}
	var last error
	for _, name := range names {
		if !strings.Contains(name, "/") {
			last = hc.Builtin(ctx, []string{"command", "-v", "--", name})
			continue
		}
		path, err := LookPath(hc.Dir, hc.Env, name, nil, stat)
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
func (bs *Set) sourceBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	if bs.core.RefusedFiles() {
		return bs.refusedLookup(ctx, args[1])
	}
	stat := bs.jailStat(ctx)
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
func (bs *Set) pwdBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
	physical := false
	flags, rest := splitFlags(args[1:])
	for _, f := range flags {
		switch f {
		case 'P':
			physical = true
		case 'L':
			physical = false
		default:
			return hc.Builtin(ctx, args) // its own message for a bad option
		}
	}
	if len(rest) > 0 || !physical {
		return hc.Builtin(ctx, args)
	}
	pwd := hc.Env.Get("PWD").String()
	if pwd == "" {
		pwd = hc.Dir // as bash: the working directory
	}
	switch {
	case bs.core.RefusedFiles():
		return bs.refusedLookup(ctx, pwd)
	case !bs.core.JailedFiles():
		return hc.Builtin(ctx, args)
	}
	real, err := bs.core.Resolve(ctx, pwd)
	if err != nil {
		var pe *fs.PathError
		if err = bs.core.AccessError(ctx, pwd, err); !errors.As(err, &pe) {
			return err // the file server failed: the script stops
		}
		fmt.Fprintf(hc.Stderr, "wsh: pwd: %v\n", pe.Err)
		return interp.ExitStatus(1)
	}
	fmt.Fprintln(hc.Stdout, real)
	return nil
}
