//go:build !unix

package main

import "syscall"

// dieOf: where a process cannot send itself a signal, wsh exits with
// 128+N (main's status).
func dieOf(syscall.Signal) {}
