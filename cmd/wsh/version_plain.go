//go:build !linux || !cgo

package main

// jailVersion: this build has no jail.
func jailVersion() (libseccompVersion, jailInit string) {
	return "", "none: this build has no jail (it needs Linux and cgo)"
}
