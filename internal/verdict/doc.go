// Package verdict is the only code that interprets a launch of the jail:
// what its facts (proto.Facts, from package launch) mean (Classify), what
// a verdict means in a Runner (State: sticky degrade, fail-closed under
// WSH_REQUIRE_SANDBOX, no degrade once a jail worked), and the one
// warning's text. It is pure: no system calls, table-tested.
package verdict
