// Package jailer runs a Runner's external commands: in the jail, through
// package launch, or unsandboxed when opted out or after the host refused
// the jail; it starts the jails of the file server through which package
// shellfs does the interpreter's own file access (redirections, globbing,
// cd, test) in the jail; and it holds the protected paths. What a launch's facts mean it asks package
// verdict. It exists only where the jail does (Linux, cgo).
package jailer
