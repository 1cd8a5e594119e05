//go:build linux && cgo

package paths

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"wsh/internal/proto"
)

// Hiding is what the jails are to cover (WSH_HIDE, wsh's state
// directory), as the spec of each jail gives it: the hidden paths as
// they were when wsh started, and every place one of them led to since.
type Hiding struct {
	Writable []proto.PathID // the writable paths, as they were when wsh started
	hidden   []proto.PathID // Dev and Ino 0 where the path did not exist
	learned  *learnedHidden
	HomePath string // the copy-on-write home's path, or ""
}

// NewHiding records the identity of each writable path and of each
// hidden path that exists, as they are now.
func NewHiding(writable, hidden []string) (Hiding, error) {
	p := Hiding{learned: &learnedHidden{}}
	for _, w := range writable {
		id, err := proto.NewPathID(w)
		if err != nil {
			return Hiding{}, err
		}
		p.Writable = append(p.Writable, id)
	}
	for _, h := range hidden {
		id, err := proto.NewPathID(h)
		if errors.Is(err, fs.ErrNotExist) {
			id, err = proto.PathID{Path: h}, nil
		}
		if err != nil {
			return Hiding{}, err
		}
		p.hidden = append(p.hidden, id)
	}
	return p, nil
}

// NameHidden reports whether real, a resolved path, is or lies beneath a
// hidden path, or a place one led to.
func (p *Hiding) NameHidden(real string) bool {
	for _, h := range p.hidden {
		if Under(real, h.Path) {
			return true
		}
	}
	for _, l := range p.learned.list() {
		if Under(real, l) {
			return true
		}
	}
	return false
}

// learnedHidden is where hidden paths led, through a symlink, at any time
// since wsh started (a hidden path the host made a symlink to a directory
// elsewhere while wsh ran): it stays hidden for the rest of the run, so a
// command that removes or re-points the symlink (in the copy-on-write
// home, or in a writable path) does not uncover what it led to.
type learnedHidden struct {
	mu    sync.Mutex
	paths []string
}

func (l *learnedHidden) list() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paths
}

func (l *learnedHidden) add(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.paths, path) {
		l.paths = append(l.paths[:len(l.paths):len(l.paths)], path)
	}
}

// HiddenNow is what the next jail is to cover: the hidden paths, and every
// place one led to, learned now or before. A place that is the root, a
// writable path or the home, or holds one, is not learned: covering it
// would end the run's work (a command can point a hidden path that lies in
// a writable path anywhere), and while the symlink leads there the jail
// covers it anyway.
//
// Where a hidden path leads is asked of the host: a symlink there that a
// command made (in the copy-on-write home, or a writable path) leads where
// that command chose, which it could read anyway; one the host made leads
// to what the host keeps there, which is covered from then on.
func (p *Hiding) HiddenNow() []proto.PathID {
	if len(p.hidden) == 0 {
		return nil
	}
	for _, h := range p.hidden {
		if r, err := filepath.EvalSymlinks(h.Path); err == nil && r != h.Path && p.mayLearn(r) {
			p.learned.add(r)
		}
	}
	learned := p.learned.list()
	if len(learned) == 0 {
		return p.hidden
	}
	ids := append([]proto.PathID(nil), p.hidden...)
	for _, l := range learned {
		ids = append(ids, proto.PathID{Path: l})
	}
	return ids
}

// HiddenPaths are the paths the jails cover now, as the host shows them:
// what package protect's protector keeps out of (protect_hidden.go).
func (p *Hiding) HiddenPaths() []string {
	var out []string
	for _, id := range p.HiddenNow() {
		out = append(out, id.Path)
	}
	return out
}

func (p *Hiding) mayLearn(r string) bool {
	if r == "/" || !filepath.IsAbs(r) {
		return false
	}
	for _, w := range p.Writable {
		if Under(w.Path, r) {
			return false
		}
	}
	return p.HomePath == "" || !Under(p.HomePath, r)
}

// Under reports whether p is dir or lies beneath it.
func Under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
