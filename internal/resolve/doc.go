// Package resolve opens a path as openat2(2) does under its resolve
// restrictions (RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS,
// RESOLVE_BENEATH), and walks the path by hand with the same restrictions
// where the kernel or a seccomp filter refuses openat2: a kernel before
// 5.6, or wsh inside a wsh jail, whose filter answers openat2 with ENOSYS
// because it cannot read the flags openat2 carries in memory.
package resolve
