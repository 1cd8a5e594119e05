// Package session holds the Runner's one jail (WSH_JAIL=session): made
// once, by package confine's Jailer, before any command runs; every
// command forked in it while it is what a jail of the command's own would
// be; the protected paths that appeared bound in place in the live jail;
// made anew when it went stale. The Jailer gives it what it needs of the
// core (requests, filters, the home, the proxy, the watch) through Core.
package session
