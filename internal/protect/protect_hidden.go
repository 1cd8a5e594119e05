//go:build linux && cgo

package protect

import (
	"os"
	"path/filepath"
	"wsh/internal/paths"

	"golang.org/x/sys/unix"
)

// What wsh protects, it protects where a command can write: a placeholder
// is made, a protected path bound read-only, and a directory pinned only
// in a writable path (rootOf) and never in a hidden one (WSH_HIDE, wsh's
// state directory, and where one led since wsh started). A hidden path
// is covered in every jail: no command can write there, so nothing
// there needs protecting, and each placeholder or mount wsh made there
// would be a change to a directory the user hid, and a name from it in
// the jail's mountinfo. A gitdir outside the writable paths needs
// neither: the jail's view of it is the host's read-only / (or, in the
// home, the copy-on-write home, whose writes never reach the host's
// files), so a command cannot write the config or hooks that the host's
// git reads there.
//
// A .git file, a .git symlink or a commondir (which a command can have
// written, naming any directory) is followed into a hidden path never:
// wsh reads nothing there, so nothing found there names more paths to
// protect. Outside the writable paths it is read (its config's
// core.hooksPath, its worktrees' .git files), which a command cannot have
// written, for what it names in the writable paths; nothing is made or
// bound there.

// hiddenPlaces are the hidden paths now, as written and as they resolve
// on the host.
func (p *Protector) hiddenPlaces() []string {
	if p.Hidden == nil {
		return nil
	}
	var out []string
	for _, h := range p.Hidden() {
		out = append(out, h)
		if r, err := p.resolve(h, &Protection{}); err == nil && r != h {
			out = append(out, r)
		}
	}
	return out
}

// hides reports whether path, as written, is or lies beneath a hidden
// path (hiddenPlaces, found by candidates).
func (pr *Protection) hides(path string) bool {
	for _, h := range pr.hidden {
		if paths.Under(path, h) {
			return true
		}
	}
	return false
}

// mayFollow reports whether wsh may look into dir, a gitdir or common
// directory that a .git file, a .git symlink or a commondir names: not
// when it is or lies beneath a hidden path, as written or as it resolves
// on the host. A path that cannot be resolved fails the protection.
func (p *Protector) mayFollow(dir string, pr *Protection) bool {
	if pr.hides(dir) {
		return false
	}
	if len(pr.hidden) == 0 {
		return true
	}
	// Resolved without noting the symlinks on the way: the walk to each
	// protected path beneath dir notes those.
	r, err := p.resolve(filepath.Clean(dir), &Protection{})
	if err != nil {
		pr.fail(err)
		return false
	}
	return !pr.hides(r)
}

// unprivilegedWritable reports whether this process could make an entry
// in the directory st is by its mode alone, as a command in the jail,
// which has no capability, can. For root it is the test the kernel skips
// (CAP_DAC_OVERRIDE): wsh as root would otherwise make placeholders in
// another user's directory in /tmp that a .git file a command planted
// names, where no command could write. For other users the kernel's own
// check (ACLs included) is the one that counts: mkdirat answers it.
func unprivilegedWritable(st *unix.Stat_t) bool {
	if os.Geteuid() != 0 {
		return true
	}
	const wx = 0o3 // write and search, in each class of the mode
	switch {
	case st.Uid == 0:
		return st.Mode>>6&wx == wx
	case inGroup(st.Gid):
		return st.Mode>>3&wx == wx
	}
	return st.Mode&wx == wx
}

// inGroup reports whether gid is this process's group or one of its
// supplementary groups.
func inGroup(gid uint32) bool {
	if int(gid) == os.Getegid() {
		return true
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if uint32(g) == gid {
			return true
		}
	}
	return false
}
