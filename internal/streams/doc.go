// Package streams holds what wsh keeps of a command's standard streams:
// the status flags of the streams given to a Runner, put back after each
// command; the terminals' settings, put back when the Runner closes; the
// streams a jail cannot show in place, passed through pipes; and the
// names (/dev/stdin, /dev/fd/1, ...) of the shell's own streams. Package
// confine uses it. It exists only where the jail does (Linux, cgo).
package streams
