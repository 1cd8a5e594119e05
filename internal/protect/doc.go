// Package protect finds the paths beneath the writable ones that the jail
// keeps read-only (what the host runs later: shells' and tools' files,
// git repositories' config and hooks, config read from parent
// directories), makes the placeholders where they are missing, notes
// them in a ledger and removes them at the run's end. package confine
// uses it for each command's jail and the shell's own writes.
package protect
