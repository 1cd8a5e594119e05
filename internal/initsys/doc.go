// Package initsys holds what the processes that wsh's init binary runs
// share: the read of a descriptor with read(2), the report on the sentinel
// pipe, EINTR retries, an open that follows no symlink, the check of the
// user namespace, the signals an init forwards or drops, and the last
// reaping. Package initproc and the packages it dispatches to (homekeeper,
// sessioninit) use it.
package initsys
