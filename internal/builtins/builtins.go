//go:build linux && cgo

package builtins

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/job"
)

// wsh's own builtins, for what mvdan.cc/sh leaves unsupported and wsh can
// give through its handlers (no fork of the interpreter): the call
// handler renames a call of one (umask, or builtin umask) to
// builtinPrefix+name, which is no builtin or function of the
// interpreter's and so comes to the exec handler, which runs it with the
// interpreter's own builtins at hand (HandlerContext.Builtin). A
// function of the same name defined by the script is not seen: the call
// handler cannot see the interpreter's functions.
const builtinPrefix = "\x00wsh-builtin:"

// Core is what the builtins need of the exec handler that runs them
// (the Jailer): to run a command, to reach a job's commands, and the
// shell's own file access, for the lookups.
type Core struct {
	// External runs args as an external command, found in PATH, in the
	// jail (kill's process ids).
	External func(ctx context.Context, args []string) error
	// Signal sends sig to every command of job id that runs now.
	Signal func(id string, sig syscall.Signal)
	// JailedFiles says that the shell's file access is done in the jail.
	JailedFiles func() bool
	// RefusedFiles says that no jail can do the shell's file access,
	// and none may be done without one.
	RefusedFiles func() bool
	// Refuse is the error of an access to name that RefusedFiles
	// refuses: the script stops (wsh says why).
	Refuse func(ctx context.Context, name string) error
	// StatFollow stats path, following symlinks, where the jail finds it.
	StatFollow func(ctx context.Context, path string) (fs.FileInfo, error)
	// Resolve is the path path leads to in the jail.
	Resolve func(ctx context.Context, path string) (string, error)
	// AccessError is the error of the shell's access to name that
	// failed with err: an *fs.PathError as a shell prints it, or
	// another that stops the script (wsh said why).
	AccessError func(ctx context.Context, name string, err error) error
}

// A Set is wsh's builtins for the interpreters of one Jailer, with the
// table of their background jobs.
type Set struct {
	core Core
	jobs jobTable
}

// New returns the builtins of the interpreters whose exec handler is core.
func New(core Core) *Set { return &Set{core: core} }

type builtinFunc func(bs *Set, ctx context.Context, hc interp.HandlerContext, args []string) error

// builtin is wsh's builtin name, or nil. (A function, not a map: the
// builtins reach, through the commands they run, NewInterp, which uses
// it.)
func builtin(name string) builtinFunc {
	switch name {
	case "umask":
		return (*Set).umaskBuiltin
	case "kill":
		return (*Set).kill
	case "jobs":
		return (*Set).jobsBuiltin
	case "wait":
		return (*Set).wait
	case "fg", "bg":
		return (*Set).noJobControl
	case "disown":
		return (*Set).disown
	case "trap":
		return (*Set).trap
	// The lookups, renamed by lookupRename alone.
	case "type":
		return (*Set).typeBuiltin
	case "command-v":
		return (*Set).commandV
	case "source":
		return (*Set).sourceBuiltin
	case "pwd":
		return (*Set).pwdBuiltin
	// job.Mark's calls, run as they are named (not renamed).
	case job.StartCall:
		return (*Set).startJob
	case job.EndCall:
		return func(bs *Set, _ context.Context, hc interp.HandlerContext, _ []string) error { return bs.endJob(hc) }
	}
	return nil
}

// Rename returns args with a call of one of wsh's builtins renamed
// (builtinPrefix), or args as they are: the call handler's. A call in a
// job that kill %N ended is exit with the signal's status: the job ends
// there, as a subshell killed by it does in bash (but for job.Mark's
// calls, which record its end).
func (bs *Set) Rename(hc interp.HandlerContext, args []string) []string {
	if sig := bs.jobs.killed(hc); sig != 0 && !job.Internal(args) {
		return []string{"exit", strconv.Itoa(128 + int(sig))}
	}
	if renamed, ok := RenameLookup(args, bs.core.RefusedFiles()); ok {
		return renamed
	}
	i := 0
	if (args[0] == "builtin" || args[0] == "command") && len(args) > 1 {
		i = 1 // builtin umask, command umask
	}
	switch args[i] {
	case "type", "source", ".", "pwd":
		return args // the interpreter's own does what the jail would
	}
	if builtin(args[i]) == nil || args[i] == job.StartCall || args[i] == job.EndCall {
		return args
	}
	return append([]string{builtinPrefix + args[i]}, args[i+1:]...)
}

// RenameLookup returns args with a call of one of the lookups done in
// the jail renamed (lookupRename), and true; or false. refused is
// Core.RefusedFiles's answer.
func RenameLookup(args []string, refused bool) ([]string, bool) {
	if at, r := lookupRename(args, refused); r != "" {
		return append([]string{builtinPrefix + r}, args[at+1:]...), true
	}
	return args, false
}

// Renamed says whether args is a call Rename or RenameLookup renamed.
func Renamed(args []string) bool { return strings.HasPrefix(args[0], builtinPrefix) }

// Run runs args if it is a renamed builtin call, or one of job.Mark's,
// and says whether it was.
func (bs *Set) Run(ctx context.Context, args []string) (error, bool) {
	name, ok := strings.CutPrefix(args[0], builtinPrefix)
	if !ok && args[0] != job.StartCall && args[0] != job.EndCall {
		return nil, false
	}
	if !ok {
		name = args[0]
	}
	b := builtin(name)
	if b == nil {
		return interp.ExitStatus(127), true
	}
	return b(bs, ctx, interp.HandlerCtx(ctx), append([]string{name}, args[1:]...)), true
}

func exitStatus(status int) error {
	if status == 0 {
		return nil
	}
	return interp.ExitStatus(uint8(status))
}

// trap is the interpreter's trap for what it has (EXIT, ERR), and a clear
// refusal for a signal: wsh's interpreter is no process of the script's
// that a signal could reach (a terminal's Ctrl-C goes to the foreground
// command), so a trap on one would never run.
func (bs *Set) trap(ctx context.Context, hc interp.HandlerContext, args []string) error {
	ops := args[1:]
	if len(ops) > 0 && ops[0] == "--" {
		ops = ops[1:]
	}
	out := []string{"trap"}
	if len(ops) > 0 {
		out = append(out, ops[0])
	}
	if len(ops) > 1 {
		for _, sig := range ops[1:] {
			switch name := strings.TrimPrefix(strings.ToUpper(sig), "SIG"); name {
			case "EXIT", "0":
				out = append(out, "EXIT") // 0 is EXIT, which the interpreter takes only by name
			case "ERR":
				out = append(out, name)
			default:
				fmt.Fprintf(hc.Stderr, "wsh: trap: %s: not supported: a signal to wsh does not reach the script's traps "+
					"(Ctrl-C goes to the foreground command, as SIGINT); wsh traps EXIT and ERR\n", sig)
				return interp.ExitStatus(2)
			}
		}
	}
	return hc.Builtin(ctx, out)
}
