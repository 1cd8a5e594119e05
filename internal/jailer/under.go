//go:build linux && cgo

package jailer

import "strings"

// under reports whether p is dir or lies beneath it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
