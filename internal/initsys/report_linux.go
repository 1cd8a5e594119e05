package initsys

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
)

// WriteReport writes, on the sentinel pipe (proto.ReportFD), that step
// failed with err's errno.
func WriteReport(step degrade.Step, err error) {
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		errno = syscall.EIO // bug: every step returns an errno
	}
	b := proto.EncodeReport(degrade.Report{Step: step, Errno: errno})
	unix.Write(proto.ReportFD, b[:])
}
