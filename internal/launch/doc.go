// Package launch is the parent side of wsh's jail: it starts the jail init
// (a sealed in-memory copy of the embedded init, or of this binary) in new
// namespaces, gives it its spec, protection, sentinel pipe and standard
// streams at the descriptors package proto names, stops it on
// cancellation, and returns what it saw as degrade.Facts. What the facts
// mean is package degrade's call, never this package's. It also starts
// and talks to the keeper of the copy-on-write home.
package launch
