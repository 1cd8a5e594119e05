package proto

import (
	"encoding/binary"
	"syscall"
	"wsh/degrade"
)

// ErrStream is the errno with which the stdio step fails for a stream the
// jail cannot show.
const ErrStream = degrade.ErrStream

// ReportFD is the descriptor on which the jail init finds the sentinel pipe.
const ReportFD = 3

// ReportSize is the size of one report on the sentinel pipe.
const ReportSize = 8

// ReservedStatus is the exit status of a jail init that wrote a report. It
// carries no meaning on its own: the parent decides from the report only,
// because a target may exit with any status.
const ReservedStatus = 125

var magic = [2]byte{'w', 0xa5}

// EncodeReport returns the report's fixed-size wire form.
func EncodeReport(r degrade.Report) [ReportSize]byte {
	var b [ReportSize]byte
	b[0], b[1] = magic[0], magic[1]
	b[2] = byte(r.Step)
	binary.LittleEndian.PutUint32(b[4:], uint32(r.Errno))
	return b
}

// DecodeReport parses one report. Anything that is not exactly one valid
// report (wrong size, magic, step or a zero errno) is not a report.
func DecodeReport(b []byte) (degrade.Report, bool) {
	if len(b) != ReportSize || b[0] != magic[0] || b[1] != magic[1] || b[3] != 0 {
		return degrade.Report{}, false
	}
	r := degrade.Report{Step: degrade.Step(b[2]), Errno: syscall.Errno(binary.LittleEndian.Uint32(b[4:]))}
	if !r.Step.Reported() || r.Errno == 0 {
		return degrade.Report{}, false
	}
	return r, true
}
