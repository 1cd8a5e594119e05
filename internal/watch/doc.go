// Package watch says what commands did to the protected paths that their
// jails could not keep them from: on the lower rungs, the protected paths
// a command made or changed; in a live session, the paths bound read-only
// that changed since; the git configs and hooks of repositories made
// during the run. Package confine keeps one Watch and calls it around each
// command, at a Run's end and at Close.
package watch
