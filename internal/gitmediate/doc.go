// Package gitmediate is wsh's side of a repository config's writes on the
// full rung: the jail's renames onto a protected .git/config reach it by
// seccomp user notification (the listener the init sends on proto.GitFD),
// and it writes the host's config in place when every key the new content
// adds or changes is allowed, or refuses the rename saying why. Package
// confine starts a Mediator for each full rung's jail.
package gitmediate
