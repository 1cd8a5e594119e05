// Package proto is the wire between wsh and its jail init: the spec the
// parent sends (on SpecFD), the protected paths sent while the init
// starts (ProtectFD), path ids, the setup steps and the report an init
// writes on the sentinel pipe (ReportFD) when one fails, the keeper's
// messages, and the readback of wsh doctor. Both sides import it; it
// decides nothing.
package proto
