// Package paths holds the jail's paths as wsh decides them before any
// jail is made: the writable paths (and why the start directory may not
// be one), the hidden paths and where they were seen to lead, the check
// of the ground under the writable paths (symlinks a command could have
// laid, directories the host runs programs from), the copy-on-write
// home's plan and wsh's state directory. Package confine uses it, and
// wsh home. It exists only where the jail does (Linux, cgo).
package paths
