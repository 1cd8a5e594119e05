// Package seccomp is wsh's seccomp policy, in named groups, and its
// compiler: the parent compiles the filter once (libseccomp, so cgo) and
// every jail init loads the program it is given (package proto carries
// it).
package seccomp
