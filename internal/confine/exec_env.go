//go:build linux && cgo

package confine

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// execEnv is the environment a command gets: the exported string variables,
// as the interpreter holds them.
func execEnv(env expand.Environ) []string {
	var list []string
	seen := map[string]int{}
	for name, vr := range env.Each {
		i, dup := seen[name]
		keep := vr.IsSet() && vr.Exported && vr.Kind == expand.String && !strings.HasPrefix(name, privatePrefix)
		switch {
		case dup && keep:
			list[i] = name + "=" + vr.String()
		case dup:
			list[i] = ""
		case keep:
			seen[name] = len(list)
			list = append(list, name+"="+vr.String())
		}
	}
	out := list[:0]
	for _, kv := range list {
		if kv != "" {
			out = append(out, kv)
		}
	}
	return out
}
