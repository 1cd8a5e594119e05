//go:build linux && cgo

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"wsh/internal/proto"
)

// printDoctor writes the human text of a report.
func printDoctor(w io.Writer, rep *doctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	f := rep.Facts
	fmt.Fprintln(tw, "host")
	fmt.Fprintf(tw, "  kernel\t%s\n", f.Kernel)
	fmt.Fprintf(tw, "  user.max_user_namespaces\t%s\n", orAbsent(f.MaxUserNamespaces))
	fmt.Fprintf(tw, "  kernel.unprivileged_userns_clone\t%s\n", orAbsent(f.UnprivilegedUsernsClone))
	fmt.Fprintf(tw, "  kernel.apparmor_restrict_unprivileged_userns\t%s\n", orAbsent(f.AppArmorRestrictUserns))
	fmt.Fprintf(tw, "  wsh's own seccomp mode\t%s\n", orAbsent(f.OwnSeccomp))
	fmt.Fprintf(tw, "  container\t%s\n", f.Container)
	if c := rep.Config; c != nil {
		fmt.Fprintln(tw, "configuration")
		fmt.Fprintf(tw, "  WSH_NO_SANDBOX\t%v\n", c.NoSandbox)
		fmt.Fprintf(tw, "  WSH_REQUIRE_SANDBOX\t%v\n", c.RequireSandbox)
		fmt.Fprintf(tw, "  writable paths\t%s\n", strings.Join(c.Writable, ", "))
		fmt.Fprintf(tw, "  hidden paths\t%s\n", strings.Join(c.Hidden, ", "))
		if c.UnixWithheld {
			fmt.Fprintf(tw, "  unix sockets\t%s, withheld on this rung while WSH_HIDE is set: socket(AF_UNIX) is refused\n", c.UnixSockets)
		} else {
			fmt.Fprintf(tw, "  unix sockets\t%s\n", c.UnixSockets)
		}
		fmt.Fprintf(tw, "  network\t%s\n", c.Network)
		if c.Network == "proxy" {
			allow := strings.Join(c.AllowHosts, ", ")
			if allow == "" {
				allow = "(none: every request is refused)"
			}
			fmt.Fprintf(tw, "  allowed hosts\t%s\n", allow)
			fmt.Fprintf(tw, "  denied hosts\t%s\n", strings.Join(c.DenyHosts, ", "))
		}
		switch {
		case c.Session:
			fmt.Fprintf(tw, "  jail\tsession: one jail for all the commands of a run (they share its loopback, processes, IPC)\n")
		case c.Jail == "session" && !c.NoSandbox:
			fmt.Fprintf(tw, "  jail\tsession asked for, not in force on this rung: a jail per command\n")
		default:
			fmt.Fprintf(tw, "  jail\t%s\n", c.Jail)
		}
	}
	if h := rep.Home; h != nil {
		fmt.Fprintln(tw, "the jail's $HOME")
		fmt.Fprintf(tw, "  mode\t%s\n", strings.TrimSpace(h.Mode+" "+paren(h.Why)))
		if h.Home != "" {
			fmt.Fprintf(tw, "  home\t%s\n", h.Home)
		}
		if h.State != "" {
			fmt.Fprintf(tw, "  wsh's state directory\t%s\n", h.State)
		}
	}
	if len(rep.Steps) > 0 {
		fmt.Fprintln(tw, "jail setup, run as for every command")
		for _, s := range rep.Steps {
			fmt.Fprintf(tw, "  %s\t%s\n", s.Step, strings.TrimSpace(s.Result+" "+s.Errno))
		}
	}
	if rb := rep.Readback; rb != nil {
		fmt.Fprintln(tw, "read back from the kernel inside the jail")
		fmt.Fprintf(tw, "  CapInh CapPrm CapEff CapBnd CapAmb\t%s %s %s %s %s\n", rb.CapInh, rb.CapPrm, rb.CapEff, rb.CapBnd, rb.CapAmb)
		fmt.Fprintf(tw, "  NoNewPrivs, Seccomp\t%d, %d\n", rb.NoNewPrivs, rb.Seccomp)
		fmt.Fprintf(tw, "  pid, and PID 1\t%d, %s\n", rb.PID, rb.PID1)
		fmt.Fprintf(tw, "  the init's binary\t%s\n", rb.Exe)
		fmt.Fprintf(tw, "  network devices\t%s\n", strings.Join(rb.NetDevices, " "))
		if rb.Proxy != "" {
			fmt.Fprintf(tw, "  wsh's proxy, asked for %s\t%s\n", proto.ProxyProbeHost, rb.Proxy)
		}
		fmt.Fprintf(tw, "  root read-only\t%v\n", rb.RootRO)
		if h := rb.Home; h != nil {
			fmt.Fprintf(tw, "  mounted at the home\t%s\n", strings.TrimSpace(h.FSType+" "+paren(h.Upper)))
			fmt.Fprintf(tw, "  wsh's state directory hidden\t%v\n", h.StateHidden)
		}
	}
	fmt.Fprintln(tw, "seccomp policy (refused in the jail)")
	for _, g := range rep.Seccomp {
		fmt.Fprintf(tw, "  %s\t%s\n", g.Group, strings.Join(g.Refuses, ", "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nrungs tried:")
	for _, r := range rep.Rungs {
		fmt.Fprintf(w, " %s %s", r.Rung, r.Result)
		if r.Step != "" {
			fmt.Fprintf(w, " (%s %s)", r.Step, r.Errno)
		}
		fmt.Fprint(w, ";")
	}
	if len(rep.Rungs) == 0 {
		fmt.Fprint(w, " none")
	}
	fmt.Fprintf(w, "\nrung in force: %s\n", rep.Rung)
	fmt.Fprintf(w, "verdict: %s (exit %d)\n  %s\n", rep.Verdict, rep.Status, rep.Reason)
}

func orAbsent(p *int64) string {
	if p == nil {
		return "(absent)"
	}
	return strconv.FormatInt(*p, 10)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}
