// Package hostrule is the form of the entries of WSH_ALLOW_HOSTS and
// WSH_DENY_HOSTS, and how a host a command asks for is matched against
// them. config checks the entries with it; the proxy matches with it.
package hostrule

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// A Rule is one entry: a host name, the subdomains of a domain
// (*.domain), or an address; and a port, or any (0).
type Rule struct {
	// Name is a normalised host name (lower case, no trailing dot), or
	// with Wildcard the domain whose subdomains match (not itself).
	Name     string
	Wildcard bool
	// Addr is set for an address entry, which matches that address
	// only (IPv4-mapped IPv6 addresses are taken as IPv4).
	Addr netip.Addr
	Port uint16
}

// Parse reads one entry: name, *.domain, IPv4 address or bracketed IPv6
// address, each with an optional :port.
func Parse(s string) (Rule, error) {
	in := s
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, errors.New("an empty entry (two commas, or one at an end)")
	}
	host, port, err := splitPort(s)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %v", in, err)
	}
	r := Rule{Port: port}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return Rule{}, fmt.Errorf("%q: an unclosed '['", in)
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Rule{}, fmt.Errorf("%q: not an IPv6 address in brackets", in)
		}
		r.Addr = a.Unmap()
		return r.checkAddr(in)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is6() {
			return Rule{}, fmt.Errorf("%q: write an IPv6 address in brackets, as [%s]", in, a)
		}
		r.Addr = a
		return r.checkAddr(in)
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard, host = true, rest
	}
	name, err := Normalize(host)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %v", in, err)
	}
	if _, err := netip.ParseAddr(name); err == nil || LooksNumeric(name) {
		return Rule{}, fmt.Errorf("%q: not a host name (an address is written alone, without *.)", in)
	}
	r.Name = name
	return r, nil
}

// checkAddr refuses an address entry that would name more than one host:
// the unspecified address is every local one.
func (r Rule) checkAddr(in string) (Rule, error) {
	if r.Addr.IsUnspecified() {
		return Rule{}, fmt.Errorf("%q: the unspecified address reaches every address of this host; name the one meant", in)
	}
	if r.Addr.Is6() && r.Addr.IsLinkLocalUnicast() {
		return Rule{}, fmt.Errorf("%q: a link-local IPv6 address is reached only through an interface, which an entry cannot name", in)
	}
	return r, nil
}

// splitPort splits an optional :port off s.
func splitPort(s string) (string, uint16, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.HasSuffix(s, "]") || strings.HasPrefix(s, "[") && !strings.Contains(s[:i], "]") {
		return s, 0, nil
	}
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		return s, 0, nil // a bare IPv6 address: refused by the caller
	}
	p, err := strconv.ParseUint(s[i+1:], 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("%q is not a port (1 to 65535)", s[i+1:])
	}
	return s[:i], uint16(p), nil
}

// Normalize is a host name as rules and requests are compared: lower
// case, without a trailing dot, checked to be a DNS name of ASCII labels.
func Normalize(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", errors.New("not a host name")
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%q is not a label of a host name", l)
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c >= 0x80 {
					return "", errors.New("not ASCII: write the name's IDNA form (xn--...)")
				}
				return "", fmt.Errorf("%q is not a character of a host name", c)
			}
		}
	}
	return h, nil
}

// LooksNumeric says that every label is a number (10.1, 0x7f.1): a form
// some resolvers read as an address.
func LooksNumeric(h string) bool {
	for _, l := range strings.Split(h, ".") {
		base := 10 // and octal (a leading 0), which is digits too
		if hex, ok := strings.CutPrefix(l, "0x"); ok {
			l, base = hex, 16
		}
		if _, err := strconv.ParseUint(l, base, 64); err != nil {
			return false
		}
	}
	return true
}

// MatchName says whether the rule names the host name (normalised) on
// port. An address rule names no name.
func (r Rule) MatchName(name string, port uint16) bool {
	if r.Addr.IsValid() || r.Port != 0 && r.Port != port {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(name, "."+r.Name)
	}
	return name == r.Name
}

// MatchAddr says whether the rule is the address a, on port.
func (r Rule) MatchAddr(a netip.Addr, port uint16) bool {
	return r.Addr.IsValid() && r.Addr == a.Unmap() && (r.Port == 0 || r.Port == port)
}

// String is the entry in its normal form, as Parse reads it.
func (r Rule) String() string {
	var h string
	switch {
	case r.Addr.Is6():
		h = "[" + r.Addr.String() + "]"
	case r.Addr.IsValid():
		h = r.Addr.String()
	case r.Wildcard:
		h = "*." + r.Name
	default:
		h = r.Name
	}
	if r.Port != 0 {
		h += ":" + strconv.Itoa(int(r.Port))
	}
	return h
}

// ParseAll reads every entry of a list.
func ParseAll(entries []string) ([]Rule, error) {
	out := make([]Rule, 0, len(entries))
	for _, e := range entries {
		r, err := Parse(e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
