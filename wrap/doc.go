// Package wrap is wsh's exec middleware for an mvdan.cc/sh interpreter of
// your own: every external command your interp.Runner runs goes into
// wsh's jail, and the interpreter's own file access (redirections, globs,
// cd, test, source) is done in the jail too.
//
//	c, err := config.Load(os.Environ()) // the process's WSH_* settings
//	if err != nil { ... }
//	w, err := wrap.New(c)
//	if err != nil { ... }
//	defer w.Close()
//	r, err := interp.New(append([]interp.RunnerOption{
//		interp.StdIO(nil, os.Stdout, os.Stderr),
//		interp.ExecHandlers(myMiddleware), // yours, before wsh's
//	}, w.RunnerOptions()...)...)
//
// When the host refuses the jail with EPERM or EACCES, commands step down
// the ladder after one warning (package degrade); the middleware calls
// the next exec handler only where no confinement is in force (opted out
// with WSH_NO_SANDBOX, or the bottom of the ladder), so your chain goes on
// there as it would without wsh. With WSH_REQUIRE_SANDBOX a refused
// command ends the script with exit status 126 and the next handler is
// not called. docs/embedding.md says the rest: what each option does, and
// what an option of yours given after them undoes.
//
// A program that uses wrap calls jail.Init first in main: the jail's init
// is that program, re-executed. For a whole shell (wsh's builtins, jobs,
// signals), use package shell, which is built on this one.
package wrap
