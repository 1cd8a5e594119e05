// Package worktree holds what wsh knows of git's linked worktrees: the
// common git directory made writable for a start in a linked worktree,
// the check of a git worktree add during a command whose tree is not on
// the host, and the note on a start below a repository's top. Package
// confine uses it as a Jailer is made and around each external command.
package worktree
