package jail

import "wsh/internal/initproc"

// Init must be the first call in main of every program that runs commands
// through wsh (in a test binary: in TestMain, before m.Run). The jail's
// init is the program itself, started again with a name of wsh's as
// argv[0]: Init recognises it, does the init's work and exits, and
// returns at once in every other case. Without it shell.New returns
// shell.ErrNoInit.
func Init() { initproc.Init() }
