package initproc

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"wsh/internal/proto"
)

// readback prints what the kernel says about this process.
func readback() int {
	r := proto.Readback{NoNewPrivs: -1, Seccomp: -1, NetDevices: []string{}}
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 1
	}
	for _, line := range strings.Split(string(st), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		if p := statusFields(&r)[k]; p != nil {
			*p = v
		}
		if p := statusNumbers(&r)[k]; p != nil {
			if n, err := strconv.Atoi(v); err == nil {
				*p = n
			}
		}
	}
	r.PID = os.Getpid()
	// The readback is the init's binary run again (/proc/self/exe of the
	// init): this is the file every jail init of this wsh runs from.
	r.Exe, _ = os.Readlink("/proc/self/exe")
	if b, err := os.ReadFile("/proc/1/cmdline"); err == nil {
		r.PID1, _, _ = strings.Cut(string(b), "\x00")
	}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			r.NetDevices = append(r.NetDevices, e.Name())
		}
	}
	r.RootRO = rootReadOnly()
	if len(os.Args) == 3 && os.Args[1] != "" {
		r.Home = homeReadback(os.Args[1], os.Args[2])
	}
	if err := json.NewEncoder(os.Stdout).Encode(&r); err != nil {
		return 1
	}
	return 0
}

func statusFields(r *proto.Readback) map[string]*string {
	return map[string]*string{
		"CapInh": &r.CapInh, "CapPrm": &r.CapPrm, "CapEff": &r.CapEff, "CapBnd": &r.CapBnd,
		"CapAmb": &r.CapAmb,
	}
}

func statusNumbers(r *proto.Readback) map[string]*int {
	return map[string]*int{"NoNewPrivs": &r.NoNewPrivs, "Seccomp": &r.Seccomp}
}

// rootReadOnly reads the mount options of / from mountinfo.
func rootReadOnly() bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	ro := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			// The last mount on / is the one in force.
			ro = strings.Contains(","+f[5]+",", ",ro,")
		}
	}
	return ro
}

// homeReadback reads the mount in force at home from mountinfo, and tries
// to open the state directory.
func homeReadback(home, state string) *proto.HomeReadback {
	h := &proto.HomeReadback{Path: home}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 || f[4] != home {
			continue
		}
		h.FSType, h.Upper = g[0], ""
		for _, o := range strings.Split(g[2], ",") {
			if v, ok := strings.CutPrefix(o, "upperdir="); ok {
				h.Upper = v
			}
		}
	}
	if state != "" {
		f, err := os.Open(state)
		if err == nil {
			f.Close()
		}
		h.StateHidden = errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)
	}
	return h
}
