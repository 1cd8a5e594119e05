// Package jailer runs a Runner's external commands: in the jail, through
// package launch, or unsandboxed when opted out or after the host refused
// the jail; and it holds the in-process policy that the interpreter's own
// redirections, globbing, cd and test obey, the copy-on-write home's view,
// and the protected paths. What a launch's facts mean it asks package
// verdict. It exists only where the jail does (Linux, cgo).
package jailer
