// Package builtins holds wsh's own builtins, which package shell adds on
// top of the core (internal/confine) that runs every command in the jail:
// job control (the table of background jobs, kill %N, jobs, wait), umask,
// trap, the lookups done in the jail (type and command -v of a path,
// source's search of PATH, pwd -P), and the PATH lookup that the core's
// exec handler shares with them.
package builtins
