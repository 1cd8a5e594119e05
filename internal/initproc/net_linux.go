package initproc

import (
	"os"

	"golang.org/x/sys/unix"

	"wsh/internal/proto"
)

// loopbackUp brings up lo in the jail's own network namespace, and with
// a proxy port listens for wsh's proxy there (listenProxy); with the
// host's network there is nothing to do.
func loopbackUp(st *setupState) error {
	if err := upLoopback(st); err != nil {
		return err
	}
	return listenProxy(st)
}

func upLoopback(st *setupState) error {
	if st.spec.HostNetwork {
		return nil
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("ioctl(SIOCGIFFLAGS)", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return os.NewSyscallError("ioctl(SIOCSIFFLAGS)", err)
	}
	return nil
}

// listenProxy listens on 127.0.0.1:ProxyPort in the jail's network
// namespace and sends the socket to wsh on ProxyFD, which serves it with
// its proxy; the init keeps no copy. A port below 1024 is one that no
// command, every capability dropped, could have taken first; and no
// command runs yet. What connects before wsh accepts waits in the
// backlog.
func listenProxy(st *setupState) error {
	if st.spec.ProxyPort == 0 || st.spec.HostNetwork {
		return nil
	}
	defer unix.Close(proto.ProxyFD)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: int(st.spec.ProxyPort), Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind(the proxy's port)", err)
	}
	if err := unix.Listen(fd, 1024); err != nil {
		return os.NewSyscallError("listen", err)
	}
	if err := unix.Sendmsg(proto.ProxyFD, []byte{1}, unix.UnixRights(fd), nil, unix.MSG_NOSIGNAL); err != nil {
		return os.NewSyscallError("sendmsg(the proxy's listener)", err)
	}
	return nil
}
