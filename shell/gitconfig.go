package shell

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// gitConfigValue returns the last value of section.key (both without
// case; no subsection) in the git config file path, as git reads it:
// "key = value", a bare key for true, comments after # or ; outside
// quotes, quotes and backslash escapes, a backslash at a line's end
// joining the next. ok is false when the file has none, or cannot be
// read. It is for finding what wsh must protect (core.hooksPath), not a
// full reader: include and includeIf are not followed.
func gitConfigValue(path, section, key string) (value string, ok bool) {
	m, _ := readGitConfig(path)
	value, ok = m[strings.ToLower(section+"."+key)]
	return value, ok
}

// readGitConfig reads the values of the sections without a subsection of
// the git config file path, by "section.key" in lower case, the last one
// of each. A missing file has none; one that cannot be read, or has a line
// longer than 1 MiB, is an error: the protection fails closed rather than
// miss what git would read.
func readGitConfig(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	section := ""
	var pending string
	first := true
	for {
		more := sc.Scan()
		if !more && pending == "" {
			break
		}
		text := sc.Text()
		if !more {
			text = "" // a continuation on the last line: git ends it there
		}
		if first {
			text = strings.TrimPrefix(text, "\ufeff") // git skips a UTF-8 byte order mark
			first = false
		}
		line := pending + text
		pending = ""
		if more && strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			end := strings.IndexByte(t, ']')
			if end < 0 {
				section = ""
				continue
			}
			section = strings.ToLower(strings.TrimSpace(t[1:end]))
			if strings.ContainsAny(section, " \t\".") {
				section = "" // [core "x"] and [core.x] are not [core]
			}
			if rest := strings.TrimSpace(t[end+1:]); section != "" && rest != "" && rest[0] != '#' && rest[0] != ';' {
				// [core] hooksPath = x on one line
				if v, k, found := parseConfigLine(rest); found {
					out[section+"."+strings.ToLower(k)] = v
				}
			}
			continue
		}
		if section == "" || t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if v, k, found := parseConfigLine(t); found {
			out[section+"."+strings.ToLower(k)] = v
		}
		if !more {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// parseConfigLine parses "key = value" (or a bare "key", true).
func parseConfigLine(t string) (value, key string, ok bool) {
	k, v, eq := strings.Cut(t, "=")
	k = strings.TrimSpace(k)
	if k == "" {
		return "", "", false
	}
	if !eq {
		if i := strings.IndexAny(k, "#;"); i >= 0 {
			k = strings.TrimSpace(k[:i])
		}
		return "true", k, true
	}
	var b strings.Builder
	quoted := false
	v = strings.TrimLeft(v, " \t")
	spaces := 0 // trailing unquoted blanks, dropped at the end
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
			spaces = 0
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
				s := b.String()
				if len(s) > 0 {
					b.Reset()
					b.WriteString(s[:len(s)-1])
				}
			default:
				b.WriteByte(v[i])
			}
			spaces = 0
		case !quoted && (c == '#' || c == ';'):
			i = len(v)
		case !quoted && (c == ' ' || c == '\t'):
			b.WriteByte(c)
			spaces++
		default:
			b.WriteByte(c)
			spaces = 0
		}
	}
	s := b.String()
	return s[:len(s)-spaces], k, true
}

// gitmodulesPaths are the submodule paths that a .gitmodules file names
// (submodule.NAME.path), as written. A missing file names none.
func gitmodulesPaths(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	in := false
	for sc.Scan() {
		t := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if strings.HasPrefix(t, "[") {
			end := strings.IndexByte(t, ']')
			head := t
			if end >= 0 {
				head = t[1:end]
			}
			name, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(head, "[")), " ")
			in = strings.EqualFold(strings.TrimSpace(name), "submodule")
			continue
		}
		if !in || t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if v, k, ok := parseConfigLine(t); ok && strings.EqualFold(k, "path") && v != "" {
			out = append(out, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
