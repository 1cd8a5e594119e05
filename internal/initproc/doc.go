// Package initproc is the child side of wsh's jail: the init that a
// re-executed wsh runs inside new namespaces, its ordered setup steps,
// the protector of a session, the readback of wsh doctor, and the small
// PID-1 reaper that runs the target. Init dispatches on argv[0] to these,
// to the keeper of the copy-on-write home (package homekeeper), a
// session's init (package sessioninit) and the jail's file server
// (package fileserver).
// It reads its orders from the parent in package proto's wire format and
// answers only there.
package initproc
