// Package shell runs shell scripts with mvdan.cc/sh/v3 in which every
// external command runs in wsh's jail: the Runner, its exec middleware, the
// retry when the host refuses the jail, and the per-Runner degrade state.
//
// A program that uses it calls jail.Init() first in main: the jail is this
// same binary, re-executed.
package shell
