// Package degrade is what wsh decides when the host refuses its jail, and
// what an embedder reads about what is in force.
//
// The ladder (docs/sandbox.md): the full jail (RungFull: namespaces,
// mounts, no capabilities, no_new_privs, the seccomp filter, Landlock);
// where the host refuses namespaces, RungLandlock (no namespace, the
// filter and a Landlock ruleset); where Landlock is absent or refused too,
// RungSeccomp; at the bottom, RungNone (unsandboxed). Only EPERM and
// EACCES step down (a denial); every other failure is loud.
//
// What an embedder reads: Status (Confined on which Rung, Degraded and why,
// Refusing under WSH_REQUIRE_SANDBOX, OptedOut with WSH_NO_SANDBOX), and a
// JailError for a jail that could not be made (mode 1: its start, the
// clone or the id maps, was refused; mode 2: a setup step inside it was).
//
// How it is decided: the facts of one launch of a jail's init (Facts: a
// start error, or the step and errno its init reported on the sentinel
// pipe, or the command's status) are classified (Classify) into a Verdict;
// a Runner's State keeps what it learned (the first denial steps down for
// good, under a floor it fails closed, once a jail worked a denial is a
// command's doing and never steps down); StepDown says where a denial of a
// rung goes; Warning is the one warning's text. It is pure: no system
// calls, table-tested.
package degrade
