//go:build linux && cgo

package jailer

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

type builtinFunc func(j *Jailer, ctx context.Context, hc interp.HandlerContext, args []string) error

// builtin is wsh's builtin name, or nil. (A function, not a map: the
// builtins reach, through the commands they run, NewInterp, which uses
// it.)
func builtin(name string) builtinFunc {
	switch name {
	case "umask":
		return (*Jailer).umask
	case "kill":
		return (*Jailer).kill
	case "jobs":
		return (*Jailer).jobsBuiltin
	case "wait":
		return (*Jailer).wait
	case "fg", "bg":
		return (*Jailer).noJobControl
	case "disown":
		return (*Jailer).disown
	case "trap":
		return (*Jailer).trap
	// The lookups, renamed by lookupRename alone.
	case "type":
		return (*Jailer).typeBuiltin
	case "command-v":
		return (*Jailer).commandV
	case "source":
		return (*Jailer).sourceBuiltin
	case "pwd":
		return (*Jailer).pwdBuiltin
	// job.Mark's calls, run as they are named (not renamed).
	case job.StartCall:
		return (*Jailer).startJob
	case job.EndCall:
		return func(j *Jailer, _ context.Context, hc interp.HandlerContext, _ []string) error { return j.endJob(hc) }
	}
	return nil
}

// renameBuiltin returns args with a call of one of wsh's builtins
// renamed (builtinPrefix), or args as they are. A call in a job that
// kill %N ended is exit with the signal's status: the job ends there, as
// a subshell killed by it does in bash (but for job.Mark's calls, which
// record its end).
func (j *Jailer) renameBuiltin(hc interp.HandlerContext, args []string) []string {
	if sig := j.jobs.killed(hc); sig != 0 && !job.Internal(args) {
		return []string{"exit", strconv.Itoa(128 + int(sig))}
	}
	if at, r := lookupRename(args, j.refusedFiles()); r != "" {
		return append([]string{builtinPrefix + r}, args[at+1:]...)
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

// runBuiltin runs args if it is a renamed builtin call, or one of
// job.Mark's.
func (j *Jailer) runBuiltin(ctx context.Context, args []string) (error, bool) {
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
	return b(j, ctx, interp.HandlerCtx(ctx), append([]string{name}, args[1:]...)), true
}

// umaskVar holds the mask the script set with umask, as octal: a shell
// variable, so that a subshell's umask stays in the subshell and a
// function's does not (bash's scoping). It is not exported, and execEnv
// leaves it out of every command's environment even when the script
// exports it.
const umaskVar = "__wsh_umask"

// umask is bash's umask builtin: the file mode creation mask that every
// later external command of the shell (and its subshells) starts with,
// and that its redirections create files with.
func (j *Jailer) umask(ctx context.Context, hc interp.HandlerContext, args []string) error {
	symbolic, asCommand := false, false
	ops := args[1:]
	for len(ops) > 0 && strings.HasPrefix(ops[0], "-") && ops[0] != "-" {
		if ops[0] == "--" {
			ops = ops[1:]
			break
		}
		for _, c := range ops[0][1:] {
			switch c {
			case 'S':
				symbolic = true
			case 'p':
				asCommand = true
			default:
				fmt.Fprintf(hc.Stderr, "umask: -%c: invalid option\numask: usage: umask [-p] [-S] [mode]\n", c)
				return interp.ExitStatus(2)
			}
		}
		ops = ops[1:]
	}
	mask, err := scriptUmask(hc)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "wsh: umask: %v\n", err)
		return interp.ExitStatus(1)
	}
	switch len(ops) {
	case 0:
		out := fmt.Sprintf("%04o", mask)
		if symbolic {
			out = symbolicMask(mask)
		}
		if asCommand {
			out = "umask " + map[bool]string{true: "-S ", false: ""}[symbolic] + out
		}
		fmt.Fprintln(hc.Stdout, out)
		return nil
	case 1:
	default:
		fmt.Fprintln(hc.Stderr, "umask: too many arguments")
		return interp.ExitStatus(2)
	}
	m, err := parseUmask(ops[0], mask)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "umask: %v\n", err)
		return interp.ExitStatus(1)
	}
	// An assignment, by the one builtin that makes one where the script
	// would: global from a function, the subshell's own in a subshell.
	return hc.Builtin(ctx, []string{"eval", fmt.Sprintf("%s=%04o", umaskVar, m)})
}

// parseUmask reads an umask operand: octal, or symbolic (u=rwx,g=rx,o=),
// which says what is allowed, relative to the mask now (cur).
func parseUmask(s string, cur uint32) (uint32, error) {
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		m, err := strconv.ParseUint(s, 8, 32)
		if err != nil || m > 0o777 {
			return 0, fmt.Errorf("%s: octal number out of range", s)
		}
		return uint32(m), nil
	}
	allowed := 0o777 &^ cur
	for _, clause := range strings.Split(s, ",") {
		who, rest := 0, clause
		for rest != "" && strings.ContainsRune("ugoa", rune(rest[0])) {
			who |= map[byte]int{'u': 0o700, 'g': 0o070, 'o': 0o007, 'a': 0o777}[rest[0]]
			rest = rest[1:]
		}
		if who == 0 {
			who = 0o777
		}
		if rest == "" {
			return 0, fmt.Errorf("%s: invalid symbolic mode", s)
		}
		for rest != "" {
			op := rest[0]
			if op != '=' && op != '+' && op != '-' {
				return 0, fmt.Errorf("`%c': invalid symbolic mode operator", op)
			}
			rest = rest[1:]
			perm := 0
			for rest != "" && rest[0] != '=' && rest[0] != '+' && rest[0] != '-' {
				switch rest[0] {
				case 'r':
					perm |= 0o444
				case 'w':
					perm |= 0o222
				case 'x':
					perm |= 0o111
				default:
					return 0, fmt.Errorf("`%c': invalid symbolic mode character", rest[0])
				}
				rest = rest[1:]
			}
			perm &= who
			switch op {
			case '=':
				allowed = allowed&^uint32(who) | uint32(perm)
			case '+':
				allowed |= uint32(perm)
			case '-':
				allowed &^= uint32(perm)
			}
		}
	}
	return 0o777 &^ allowed, nil
}

// symbolicMask is umask -S's form of mask: what is allowed.
func symbolicMask(mask uint32) string {
	var parts []string
	for i, who := range []string{"u", "g", "o"} {
		bits := (0o777 &^ mask) >> (6 - 3*i) & 7
		p := who + "="
		for j, c := range "rwx" {
			if bits&(4>>j) != 0 {
				p += string(c)
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// scriptUmask is the mask for the shell hc is of: the one its umask set,
// or this process's.
func scriptUmask(hc interp.HandlerContext) (uint32, error) {
	if m, ok := setUmask(hc); ok {
		return m, nil
	}
	return processUmask()
}

// setUmask is the mask the script set with umask, if it did.
func setUmask(hc interp.HandlerContext) (uint32, bool) {
	v := hc.Env.Get(umaskVar)
	if !v.IsSet() {
		return 0, false
	}
	m, err := strconv.ParseUint(v.String(), 8, 32)
	if err != nil || m > 0o777 {
		return 0, false // the script changed it: not wsh's
	}
	return uint32(m), true
}

// umaskMu is held while this process's umask is another than its own:
// the umask is the process's, for every thread, so whatever reads it or
// makes a file with it for a script waits.
var umaskMu sync.Mutex

// withUmask runs f, an unsandboxed command's fork (which does not wait
// for long), with this process's umask set to the one hc's script set, if
// it did. It holds umaskMu in any case: another shell's fork or new file
// must not be made while one shell's mask is the process's.
func withUmask(hc interp.HandlerContext, f func()) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	if m, ok := setUmask(hc); ok {
		old := syscall.Umask(int(m))
		defer syscall.Umask(old)
	}
	f()
}

// processUmask is this process's umask, which a command's own jail
// inherits at its clone, and a session's command is given.
func processUmask() (uint32, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	// The thread /proc/thread-self names at the open is the one read:
	// locked, no other goroutine can take it and end it (asJail's end
	// their threads) between the open and the read (ESRCH).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return 0, fmt.Errorf("the umask: %w", err)
	}
	if _, rest, ok := strings.Cut(string(b), "\nUmask:\t"); ok {
		if line, _, ok := strings.Cut(rest, "\n"); ok {
			if m, err := strconv.ParseUint(line, 8, 32); err == nil {
				return uint32(m), nil
			}
		}
	}
	return 0, fmt.Errorf("the umask: no Umask line in /proc/thread-self/status")
}

// trap is the interpreter's trap for what it has (EXIT, ERR), and a clear
// refusal for a signal: wsh's interpreter is no process of the script's
// that a signal could reach (a terminal's Ctrl-C goes to the foreground
// command), so a trap on one would never run.
func (j *Jailer) trap(ctx context.Context, hc interp.HandlerContext, args []string) error {
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
