//go:build linux && cgo

package builtins

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"

	"wsh/internal/umask"
)

// umaskBuiltin is bash's umask builtin: the file mode creation mask that every
// later external command of the shell (and its subshells) starts with,
// and that its redirections create files with.
func (bs *Set) umaskBuiltin(ctx context.Context, hc interp.HandlerContext, args []string) error {
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
	mask, err := umask.Shell(hc)
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
	return hc.Builtin(ctx, []string{"eval", fmt.Sprintf("%s=%04o", umask.Var, m)})
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
