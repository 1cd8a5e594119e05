// Package e2e holds wsh's end-to-end tests: they build the wsh binary and
// read the kernel back from inside its jail.
package e2e
