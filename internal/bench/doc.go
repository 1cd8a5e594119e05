// Package bench measures what an external command costs in wsh: bare
// os/exec, mvdan.cc/sh's default exec handler, wsh opted out, the jail
// (full and with the host's network), the landlock rung, and bubblewrap
// with the same confinement; and it checks that many jailed execs leave
// nothing behind. `make bench` runs it (see internal/bench/run.sh) and prints the
// medians and ratios; docs/performance.md has the numbers.
package bench
