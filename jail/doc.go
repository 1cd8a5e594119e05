// Package jail has the one call that every program running commands
// through wsh makes first in main: Init. The jail's init is that program,
// re-executed; everything else of the jail is internal to wsh.
package jail
