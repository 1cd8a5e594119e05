package main

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setid tries to leave a setuid or setgid file behind, in a fresh
// directory under $TMPDIR (a writable path: on the host's disk), through
// every call that sets a file's mode: the chmod family, and the calls that
// create a file with a mode. Each attempt's answer is followed by what the
// file's mode bits are afterwards (read back with stat): "S_ISUID",
// "S_ISGID", or "none". In a throwaway namespace each succeeds; in the jail
// each must be refused, and no file keeps the bits.
func setid(r results, _ *config) {
	dir, err := os.MkdirTemp("", "wsh-attack-setid-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	file := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			fail("%v", err)
		}
		return p
	}
	const suid, sgid = unix.S_ISUID | 0o755, unix.S_ISGID | 0o755
	chmods := []struct {
		name string
		mode uint32
		run  func(p string, mode uint32) error
	}{
		{"chmod", suid, func(p string, m uint32) error { return unix.Chmod(p, m) }},
		{"chmod", sgid, func(p string, m uint32) error { return unix.Chmod(p, m) }},
		{"fchmod", suid, fchmod},
		{"fchmodat", suid, func(p string, m uint32) error { return unix.Fchmodat(unix.AT_FDCWD, p, m, 0) }},
		{"fchmodat2", suid, func(p string, m uint32) error {
			_, res := call(unix.SYS_FCHMODAT2, atFDCWD(), cstrPtr(p), uintptr(m), 0)
			return errorOf(res)
		}},
		{"chmod", suid | 0xdead_0000, func(p string, m uint32) error {
			_, res := call(unix.SYS_CHMOD, cstrPtr(p), uintptr(m))
			return errorOf(res)
		}},
	}
	for i, c := range chmods {
		p := file("chmod-" + string(rune('a'+i)))
		key := c.name + "(" + modeName(c.mode) + ")"
		r[key] = errName(c.run(p, c.mode)) + " " + setBits(p)
	}
	// A mode that sets no such bit must pass.
	p := file("plain")
	r["chmod(0755)"] = errName(unix.Chmod(p, 0o700)) + " " + setBits(p)
	creates := []struct {
		name string
		run  func(p string) error
	}{
		{"open(O_CREAT, S_ISUID)", func(p string) error {
			_, res := call(unix.SYS_OPEN, cstrPtr(p), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, suid)
			return errorOf(res)
		}},
		{"openat(O_CREAT, S_ISGID)", func(p string) error {
			_, res := call(unix.SYS_OPENAT, atFDCWD(), cstrPtr(p), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, sgid)
			return errorOf(res)
		}},
		{"creat(S_ISUID)", func(p string) error {
			_, res := call(unix.SYS_CREAT, cstrPtr(p), suid)
			return errorOf(res)
		}},
		{"mknod(S_IFREG|S_ISUID)", func(p string) error { return unix.Mknod(p, unix.S_IFREG|suid, 0) }},
		{"mknodat(S_IFREG|S_ISGID)", func(p string) error { return unix.Mknodat(unix.AT_FDCWD, p, unix.S_IFREG|sgid, 0) }},
	}
	for i, c := range creates {
		p := filepath.Join(dir, "create-"+string(rune('a'+i)))
		r[c.name] = errName(c.run(p)) + " " + setBits(p)
	}
	// O_TMPFILE has no name to read back; openat2 carries its flags and
	// mode in a struct that no filter can read.
	_, r["open(O_TMPFILE, S_ISUID)"] = call(unix.SYS_OPEN, cstrPtr(dir), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, suid)
	how := unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_CLOEXEC, Mode: suid}
	p2 := filepath.Join(dir, "openat2")
	_, res := call(unix.SYS_OPENAT2, atFDCWD(), cstrPtr(p2), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how))
	r["openat2(O_CREAT, S_ISUID)"] = res + " " + setBits(p2)
	// A setgid directory (group inheritance) must still be made.
	d := filepath.Join(dir, "sgid-dir")
	r["mkdir(S_ISGID)"] = errName(unix.Mkdir(d, unix.S_ISGID|0o755))
	_, r["open(O_RDONLY, mode S_ISUID)"] = call(unix.SYS_OPEN, cstrPtr(p), unix.O_RDONLY|unix.O_CLOEXEC, suid)
}

func fchmod(p string, mode uint32) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

// setBits reads back the set-id bits of p ("none" if it has neither, "-"
// if it is not there).
func setBits(p string) string {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return "-"
	}
	switch {
	case st.Mode&unix.S_ISUID != 0:
		return "S_ISUID"
	case st.Mode&unix.S_ISGID != 0:
		return "S_ISGID"
	}
	return "none"
}

func modeName(m uint32) string {
	s := ""
	if m&0xffff0000 != 0 {
		s = "high bits|"
	}
	if m&unix.S_ISUID != 0 {
		return s + "S_ISUID"
	}
	return s + "S_ISGID"
}

// kept holds the C strings given to raw system calls: a uintptr does not
// keep its memory alive.
var kept []*byte

func cstrPtr(s string) uintptr {
	b := cstr(s)
	kept = append(kept, b)
	return ptr(b)
}

func atFDCWD() uintptr {
	fd := int64(unix.AT_FDCWD)
	return uintptr(fd)
}

func errorOf(res string) error {
	if res == "ok" {
		return nil
	}
	for e := unix.Errno(1); e < 200; e++ {
		if unix.ErrnoName(e) == res {
			return e
		}
	}
	return unix.EIO
}
