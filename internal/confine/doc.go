// Package confine runs each external command of a Runner where the
// Runner's state says: in the jail (a launch of package launch, in the
// session's jail of package session or a jail of its own), on a lower rung
// of the ladder, unsandboxed (opted out, or the bottom rung), or not at all
// (WSH_REQUIRE_SANDBOX). Its Jailer decides the rung once (package
// degrade says what a launch's facts mean), builds each launch's request
// (the writable, hidden and protected paths, the compiled filter, the
// network), makes the interpreters of package shell and the middleware and
// handlers of package wrap, and gives the parts it is made of (shellfs,
// builtins, session, cowhome, jailnet, watch, worktree) what they need of
// it. It exists only where the jail does (Linux, cgo).
package confine
