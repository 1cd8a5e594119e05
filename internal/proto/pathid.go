package proto

// A PathID is a path and the identity (device and inode) it had when wsh
// resolved it. The jail init and the in-process policy open a PathID only
// if the path, followed without any symlink, still leads to that same file:
// a command that renames a parent and leaves a symlink in its place cannot
// redirect a writable bind, or a hidden mount, somewhere else.
type PathID struct {
	Path string
	Dev  uint64
	Ino  uint64
}
