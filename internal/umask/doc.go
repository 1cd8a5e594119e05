// Package umask holds the script's umask: the shell variable wsh's umask
// builtin (internal/builtins) sets, read by the core (internal/confine) and
// the shell's file access when a command starts or a redirection makes a
// file, and this process's own umask with the lock that guards it.
package umask
