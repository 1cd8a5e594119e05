//go:build linux && cgo

package protect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	es, err := parseGitConfig(path)
	if err != nil || es == nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range es {
		if !e.sub {
			out[e.section+"."+e.key] = e.value
		}
	}
	return out, nil
}

// A configEntry is one "key = value" of a git config file: section and
// key in lower case, the subsection as written (case kept) if there is
// one.
type configEntry struct {
	section, subsection, key, value string
	sub                             bool // there is a subsection
}

// parseGitConfig reads the entries of the git config file path as git
// does: [section], [section "subsection"] (with \" and \\ escapes),
// the old [section.subsection] (lower-cased), a key on the header's
// line, a bare key for true, comments after # or ; outside quotes,
// quotes and escapes in values, and a value continued on the next line
// by an odd number of backslashes at the end (a continuation on the last
// line ends there). A UTF-8 byte order mark is skipped. include and
// includeIf are not followed.
func parseGitConfig(path string) ([]configEntry, error) {
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := []configEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	var cur configEntry // the section of the lines that follow
	valid := false
	var pending string
	first := true
	add := func(t string) {
		if v, k, found := parseConfigLine(t); found && valid {
			e := cur
			e.key, e.value = strings.ToLower(k), v
			out = append(out, e)
		}
	}
	for {
		more := sc.Scan()
		if !more && pending == "" {
			break
		}
		text := sc.Text()
		if !more {
			text = ""
		}
		if first {
			text = strings.TrimPrefix(text, "\ufeff")
			first = false
		}
		line := pending + text
		pending = ""
		if more && oddBackslashes(line) {
			pending = line[:len(line)-1]
			continue
		}
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "["):
			rest := ""
			cur, rest, valid = parseSectionHeader(t)
			if rest = strings.TrimSpace(rest); valid && rest != "" && rest[0] != '#' && rest[0] != ';' {
				add(rest)
			}
		case t == "" || t[0] == '#' || t[0] == ';':
		default:
			add(t)
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

// oddBackslashes reports whether line ends in an odd number of
// backslashes: the last one escapes the newline.
func oddBackslashes(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// parseSectionHeader parses a line that starts with "[": the section, what
// follows its "]", and whether it is a header git accepts.
func parseSectionHeader(t string) (e configEntry, rest string, ok bool) {
	body := t[1:]
	if q := strings.IndexByte(body, '"'); q >= 0 && (strings.IndexByte(body, ']') < 0 || q < strings.IndexByte(body, ']')) {
		// [section "subsection"]: escapes in the quotes, then "]".
		name := strings.TrimSpace(body[:q])
		var b strings.Builder
		i := q + 1
		for ; i < len(body) && body[i] != '"'; i++ {
			if body[i] == '\\' && i+1 < len(body) {
				i++
			}
			b.WriteByte(body[i])
		}
		if i >= len(body) || !strings.HasPrefix(body[i+1:], "]") || name == "" || strings.ContainsAny(name, " \t") {
			return e, "", false
		}
		return configEntry{section: strings.ToLower(name), subsection: b.String(), sub: true}, body[i+2:], true
	}
	end := strings.IndexByte(body, ']')
	if end < 0 {
		return e, "", false
	}
	name := strings.TrimSpace(body[:end])
	if name == "" || strings.ContainsAny(name, " \t") {
		return e, "", false
	}
	if sec, sub, dotted := strings.Cut(name, "."); dotted {
		// The old form: [section.subsection], the subsection lower-cased.
		return configEntry{section: strings.ToLower(sec), subsection: strings.ToLower(sub), sub: true}, body[end+1:], true
	}
	return configEntry{section: strings.ToLower(name)}, body[end+1:], true
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

// A submodule is one that a .gitmodules file names.
type submodule struct{ name, path string }

// gitmodules are the submodules a .gitmodules file names, with the path
// each has (submodule.NAME.path, the last one), as written. A missing file
// names none.
func gitmodules(path string) ([]submodule, error) {
	es, err := parseGitConfig(path)
	if err != nil {
		return nil, err
	}
	var out []submodule
	for _, e := range es {
		if e.section != "submodule" || !e.sub || e.key != "path" {
			continue
		}
		found := false
		for i := range out {
			if out[i].name == e.subsection {
				out[i].path, found = e.value, true
			}
		}
		if !found {
			out = append(out, submodule{e.subsection, e.value})
		}
	}
	return out, nil
}

// openRegular opens path for reading without blocking on it: a FIFO or a
// device a command made where a config or a .git file is looked for (git
// would block on it, or read nothing from it) counts as not there, so
// that finding the protected paths never waits on a command.
func openRegular(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadRegular reads at most max bytes of the regular file path (see
// openRegular); more is an error.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", path, max)
	}
	return b, nil
}
