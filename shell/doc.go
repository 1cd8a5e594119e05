// Package shell runs shell scripts with mvdan.cc/sh/v3 in which every
// external command runs in wsh's jail: New makes a Runner, Status says
// what is in force (confined, degraded after the host refused the jail,
// refusing under WSH_REQUIRE_SANDBOX, opted out), and a jail that cannot
// be made is a *JailError.
//
// A program that uses it calls jail.Init() first in main (a test binary:
// in TestMain): the jail's init, and wsh doctor's readback, can be this
// same binary, started again with a name of wsh's as argv[0].
package shell
