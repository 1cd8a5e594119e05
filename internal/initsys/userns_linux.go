package initsys

import (
	"io"
	"strings"

	"golang.org/x/sys/unix"
)

// InInitialUserNamespace reports whether this process is in the initial
// user namespace, whose uid map is the whole range (user_namespaces(7)).
// wsh's jail maps exactly one uid.
func InInitialUserNamespace() bool {
	fd, err := unix.Open("/proc/self/uid_map", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true // cannot tell: refuse
	}
	defer unix.Close(fd)
	b, err := io.ReadAll(io.LimitReader(FDReader(fd), 4096))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) != 3 || f[2] != "1"
}
