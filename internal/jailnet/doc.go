// Package jailnet is the network of a Runner's jails as wsh gives it: the
// proxy of WSH_NETWORK=proxy and none (package netproxy), reached from a
// full rung's jail on its own loopback through a bridge its init hands a
// listener over, and from a landlock rung's on the host's loopback; the
// proxy variables of a command's environment. WSH_NETWORK=host is none of
// it.
package jailnet
