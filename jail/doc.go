// Package jail implements the child side of wsh's jail: the init that a
// re-executed wsh runs inside new namespaces, its ordered setup steps, the
// seccomp policy, and the small PID-1 reaper that runs the target.
package jail
