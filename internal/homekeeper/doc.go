// Package homekeeper is the keeper of a copy-on-write home: the process
// that mounts the home's overlay once, with a project's shared caches on
// it, and hands every jail of its user a clone of that mount on its
// socket. Package initproc runs it (Main) when the init binary is started
// as proto.KeeperArg0.
package homekeeper
