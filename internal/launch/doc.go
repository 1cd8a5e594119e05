// Package wrap implements the parent side of wsh's jail: it builds the
// command that re-executes wsh as the jail init, passes the sentinel pipe,
// and reads the report. What an outcome means is package degrade's call.
package launch
