// Package sessioninit is the init of a session: PID 1 of a jail set up
// once, which forks each command wsh sends on proto.SessionFD and reaps
// it (Serve), and, on the rungs without namespaces, the zygote that does
// the same in the host's namespaces (ExecZygote, ZygoteMain). Package
// initproc calls it once its setup is done.
package sessioninit
