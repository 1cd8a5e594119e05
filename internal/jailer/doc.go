// Package jailer runs a Runner's external commands: in the jail, through
// package launch, or unsandboxed when opted out or after the host refused
// the jail; it is the client of the jail's file server, which does the
// interpreter's own file access (redirections, globbing, cd, test) in the
// jail; and it holds the protected paths. What a launch's facts mean it asks package
// verdict. It exists only where the jail does (Linux, cgo).
package jailer
