package hostrule

import (
	"net/netip"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		rule, host string
		port       uint16
		want       bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "www.example.com", 443, false},
		{"example.com:443", "example.com", 80, false},
		{"*.example.com", "www.example.com", 80, true},
		{"*.example.com", "a.b.example.com", 80, true},
		{"*.example.com", "example.com", 80, false},
		{"*.example.com", "badexample.com", 80, false},
		{"*.example.com:8080", "a.example.com", 8080, true},
		{"10.0.0.1", "10.0.0.1", 1, true},
		{"10.0.0.1:22", "10.0.0.1", 23, false},
		{"[::1]:80", "::1", 80, true},
		{"[::ffff:10.0.0.1]", "10.0.0.1", 80, true}, // mapped: taken as IPv4
		{"10.0.0.1", "::ffff:10.0.0.1", 80, true},
		{"10.0.0.1", "10.0.0.2", 80, false},
		{"example.com", "10.0.0.1", 80, false},
	} {
		r, err := Parse(tt.rule)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.rule, err)
		}
		var got bool
		if a, err := netip.ParseAddr(tt.host); err == nil {
			got = r.MatchAddr(a, tt.port)
		} else {
			n, err := Normalize(tt.host)
			if err != nil {
				t.Fatal(err)
			}
			got = r.MatchName(n, tt.port)
		}
		if got != tt.want {
			t.Errorf("%q matches %s:%d = %v, want %v", tt.rule, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", " ", "*", "*.", "a..b", "-a.b", "a-.b", "a.b:0", "a.b:65536", "a.b:x", "::1", "[::1", "[10.0.0.1]",
		"http://a.b", "a.b/x", "10.1", "0x7f.1", "*.10.0.0.1", "bücher.de", "[fe80::1%eth0]", "a b", "0.0.0.0", "0.0.0.0:80", "[::]", "[::ffff:0.0.0.0]", "[fe80::1]"} {
		if r, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, r)
		}
	}
	for in, want := range map[string]string{"Example.COM.": "example.com", " *.A.b:443 ": "*.a.b:443", "[0::1]:8": "[::1]:8", "127.0.0.1": "127.0.0.1", "_dmarc.x.org": "_dmarc.x.org"} {
		if r, err := Parse(in); err != nil || r.String() != want {
			t.Errorf("Parse(%q) = %v %v, want %s", in, r, err, want)
		}
	}
}
