// Package layout holds no code: its test checks the layout's rules on the
// module's source (issue 32): no package over maxLines lines of Go, tests
// aside.
package layout
