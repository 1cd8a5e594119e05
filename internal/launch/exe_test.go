//go:build linux && cgo

package launch

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSealWaitsForABusyPage: the kernel refuses F_SEAL_WRITE with EBUSY
// while the memfd has a writable shared mapping, as it does while one of
// its pages is held for a moment; sealWrites tries again and seals once the
// mapping is gone.
func TestSealWaitsForABusyPage(t *testing.T) {
	fd, err := unix.MemfdCreate("wsh-seal-test", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		t.Fatalf("memfd_create: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE); err != unix.EBUSY {
		t.Fatalf("F_SEAL_WRITE with a writable mapping: %v, want EBUSY (the kernel's refusal this test stands on)", err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(30 * time.Millisecond)
		released <- unix.Munmap(m)
	}()
	if err := sealWrites(fd); err != nil {
		t.Fatalf("sealWrites with a mapping released after 30 ms: %v", err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&unix.F_SEAL_WRITE == 0 {
		t.Fatalf("seals after sealWrites: %#x, %v", seals, err)
	}
	if _, err := unix.Write(fd, []byte("x")); err != unix.EPERM {
		t.Fatalf("a write to the sealed memfd: %v, want EPERM", err)
	}
}
