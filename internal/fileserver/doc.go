// Package fileserver is the jail's file server: a command of a session's
// jail that does the shell's own file access (open, access, resolve) there
// and answers wsh with the errno and the descriptor. Package initproc runs
// it (Main) when the init binary is started as proto.FilesArg0; its
// package init names the process's main thread for ps.
package fileserver
