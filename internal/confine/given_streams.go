//go:build linux && cgo

package confine

// GivenStreams notes the file status flags of the streams the Runner is
// given (its stdin, stdout and stderr), before any command runs, to put
// them back after each command with no foreground one left running and
// when the Runner closes. (A terminal's settings are saved before the
// first command given it runs, which is before any command can change
// them.)
func (j *Jailer) GivenStreams(streams ...any) {
	j.given.Note(streams...)
}

// commandEnded notes that an external command ended. With no foreground
// command left running, the terminal is the shell's again (a builtin's
// read, the prompt's, the user's shell after wsh): the streams' status
// flags are put back.
func (j *Jailer) commandEnded(rc *running) {
	if j.running.end(rc) {
		j.given.Restore()
	}
}
