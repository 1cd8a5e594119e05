package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tty opens /dev/tty (there must be no controlling terminal), then runs the
// terminal attempts in a child that is the leader of a new session whose
// controlling terminal is a fresh pty: there TIOCSTI is the kernel's to
// allow, so a refusal is the filter's.
func tty(r results, _ *config) {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	r["open(/dev/tty)"] = errName(err)
	if err := ttyAttempts(r); err != nil {
		r["ioctl(TIOCSTI)"] = "error: " + err.Error()
	}
}

func ttyAttempts(r results) error {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("unlockpt: %w", err)
	}
	fd, err := unix.IoctlRetInt(int(ptmx.Fd()), unix.TIOCGPTPEER)
	if err != nil {
		return fmt.Errorf("TIOCGPTPEER: %w", err)
	}
	pts := os.NewFile(uintptr(fd), "pts")
	defer pts.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-child", "tty")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, &out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the tty child: %w", err)
	}
	return json.Unmarshal(out.Bytes(), &r)
}

// ttyChild runs in a new session with its stdin as controlling terminal.
func ttyChild() {
	r := results{}
	c := byte('#')
	_, r["ioctl(TIOCSTI)"] = call(unix.SYS_IOCTL, 0, unix.TIOCSTI, ptr(&c))
	_, r["ioctl(TIOCSTI|high bits)"] = call(unix.SYS_IOCTL, 0, high|unix.TIOCSTI, ptr(&c))
	const getShiftState = 6 // TIOCL_GETSHIFTSTATE
	sub := [2]byte{getShiftState}
	_, r["ioctl(TIOCLINUX)"] = call(unix.SYS_IOCTL, 0, unix.TIOCLINUX, ptr(&sub))
	ldisc := int32(0) // N_TTY: the discipline it has
	_, r["ioctl(TIOCSETD)"] = call(unix.SYS_IOCTL, 0, unix.TIOCSETD, ptr(&ldisc))
	_, r["ioctl(TIOCEXCL)"] = call(unix.SYS_IOCTL, 0, unix.TIOCEXCL)
	call(unix.SYS_IOCTL, 0, unix.TIOCNXCL)
	_, r["ioctl(TCXONC, TCOOFF)"] = call(unix.SYS_IOCTL, 0, unix.TCXONC, unix.TCOOFF)
	_, r["ioctl(TCXONC, TCIOFF)"] = call(unix.SYS_IOCTL, 0, unix.TCXONC, unix.TCIOFF)
	_, r["ioctl(TCXONC, TCOON)"] = call(unix.SYS_IOCTL, 0, unix.TCXONC, unix.TCOON)
	call(unix.SYS_IOCTL, 0, unix.TCXONC, unix.TCION)
	// The rule must not catch the other requests.
	var ws unix.Winsize
	_, r["ioctl(TIOCGWINSZ)"] = call(unix.SYS_IOCTL, 0, unix.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	json.NewEncoder(os.Stdout).Encode(r)
}
