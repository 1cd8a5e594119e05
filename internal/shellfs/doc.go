// Package shellfs is the shell's own file access done in the jail: the
// client of the jail's file server (proto.FilesArg0), and the
// interpreter's open, stat, read-dir and access handlers done through it,
// so that a redirection, a glob, cd and test see what a command sees.
// Package confine makes its Files and starts the servers' jails. It exists
// only where the jail does (Linux, cgo).
package shellfs
