// Package cowhome holds the copy-on-write home as package confine's Jailer
// gives it to its jails: the connection to the home's keeper (package
// launch), a clone of its mount for each jail, and what the home is
// (Status, which wsh doctor shows) or why it is not.
package cowhome
