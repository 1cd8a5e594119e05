//go:build linux && cgo

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// plantGitFiles is a jailed command that makes, for each NAME=DIR in
// $PLANT, a repository NAME whose .git file names DIR as its gitdir;
// then the next command prints its mountinfo.
const plantGitFiles = `set -- $PLANT; sh -c 'for a; do mkdir -p "${a%%=*}" && printf "gitdir: %s\n" "${a#*=}" > "${a%%=*}/.git" || exit 1; done' sh "$@" && cat /proc/self/mountinfo`

// TestProtectedNotInHidden: a command plants a .git file naming, as its
// gitdir, a directory wsh must not write in: a WSH_HIDE directory, wsh's
// state directory, a directory outside the writable paths. The next
// command's jail binds nothing beneath them (its mountinfo names none of
// their entries), and wsh made nothing there on the host (each entry's
// inode, ctime and mtime, read before and after the run: a placeholder
// made and removed changes its directory's). A gitdir in the project
// (not hidden) is protected as before: the control.
func TestProtectedNotInHidden(t *testing.T) {
	for _, u := range users {
		t.Run(u.name+"/hidden", func(t *testing.T) {
			dir := workDir(t, u)
			secret := gitdirLike(t, u, dir, "secret")
			// The home is the start directory (wshCmd's HOME), a
			// writable path: a state directory there is hidden.
			state := mkdirAllOwned(t, u, dir, ".local/state/wsh")
			os.Chmod(state, 0o700)
			gitdirLike(t, u, state, "layers")
			before := treeStamp(t, secret) + treeStamp(t, state)
			env := append([]string{"WSH_HIDE=" + secret}, jailEnv...)
			// d's gitdir is the hidden directory through a symlink the
			// command made; a's .vscode, a protected name, a symlink
			// into it.
			env = append(env, "SECRET="+secret, "PLANT=a="+secret+" b="+state+" c="+state+"/layers d="+dir+"/link")
			mi := mustRun(t, u, dir, env, `mkdir a && ln -s "$SECRET/modules" a/.vscode && ln -s "$SECRET" link && `+plantGitFiles)
			for _, h := range []string{secret, state} {
				noMountBeneath(t, mi, h)
			}
			if after := treeStamp(t, secret) + treeStamp(t, state); after != before {
				t.Errorf("wsh changed a hidden directory on the host:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
		t.Run(u.name+"/outside the writable paths", func(t *testing.T) {
			dir := workDir(t, u)
			// A home outside the writable paths (copy-on-write), and a
			// gitdir in it.
			home, err := os.MkdirTemp("/var/tmp", "wsh-e2e-home-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(home) })
			if u.uid >= 0 {
				os.Chown(home, u.uid, u.uid)
			}
			out := gitdirLike(t, u, home, "gd")
			before := treeStamp(t, out)
			env := append([]string{"HOME=" + home, "OUT=" + out, "PLANT=a=" + out + " b=" + out + "/modules/m c=" + dir + "/link"}, jailEnv...)
			mi := mustRun(t, u, dir, env, `ln -s "$OUT" link && `+plantGitFiles)
			noMountBeneath(t, mi, out)
			if after := treeStamp(t, out); after != before {
				t.Errorf("wsh changed a directory outside the writable paths:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
		t.Run(u.name+"/another user's directory in a writable path", func(t *testing.T) {
			dir := workDir(t, u)
			// Of another uid (root's for uid 65534, 65534's for root),
			// in /tmp: no command of u's can make an entry there (the
			// jail's root has no capability), so neither does wsh.
			other := user{"other", nobody}
			if u.uid >= 0 {
				other = root
			}
			home := workDir(t, other)
			os.Chmod(home, 0o755)
			theirs := gitdirLike(t, other, home, "gd")
			before := treeStamp(t, theirs)
			env := append([]string{"PLANT=a=" + theirs, "THEIRS=" + theirs}, jailEnv...)
			mi := mustRun(t, u, dir, env, `! mkdir "$THEIRS/hooks" 2>/dev/null && `+plantGitFiles)
			if after := treeStamp(t, theirs); after != before {
				t.Errorf("wsh made entries in another user's gitdir:\nbefore:\n%s\nafter:\n%s\n%s", before, after, mi)
			}
		})
		t.Run(u.name+"/in the project (control)", func(t *testing.T) {
			dir := workDir(t, u)
			store := gitdirLike(t, u, dir, "store")
			env := append([]string{"PLANT=a=" + store}, jailEnv...)
			mi := mustRun(t, u, dir, env, plantGitFiles+" && ! sh -c 'echo x > store/hooks/post-checkout' 2>/dev/null")
			if m := mountAt(t, mi, filepath.Join(store, "hooks")); !strings.HasPrefix(m.opts, "ro") {
				t.Errorf("the planted gitdir's hooks are %s in the jail, want read-only", m.opts)
			}
		})
	}
}

// gitdirLike makes dir/name, owned by u, as a gitdir that has no hooks,
// no commondir and no config.worktree (what wsh would make), with a
// submodule's gitdir beneath its modules and a file of the user's.
func gitdirLike(t *testing.T, u user, dir, name string) string {
	t.Helper()
	gd := mkdirAllOwned(t, u, dir, name)
	m := mkdirAllOwned(t, u, gd, "modules/m")
	for _, d := range []string{gd, m} {
		writeOwned(t, u, filepath.Join(d, "HEAD"), "ref: refs/heads/main\n")
		writeOwned(t, u, filepath.Join(d, "config"), "[core]\n\tbare = false\n")
	}
	writeOwned(t, u, filepath.Join(gd, "token"), "the user's\n")
	return gd
}

// treeStamp lists dir's tree on the host: each entry's path, inode,
// ctime and mtime.
func treeStamp(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s ino=%d ctime=%d.%09d mtime=%d.%09d\n", p, st.Ino, st.Ctim.Sec, st.Ctim.Nsec, st.Mtim.Sec, st.Mtim.Nsec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// noMountBeneath fails the test when mountinfo lists a mount point
// beneath dir (dir itself, which a hide covers, is not beneath it).
func noMountBeneath(t *testing.T, mountinfo, dir string) {
	t.Helper()
	if !strings.Contains(mountinfo, " - ") {
		t.Fatalf("no mountinfo in the output:\n%s", mountinfo)
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			t.Errorf("the jail's mountinfo names an entry of %s: %s", dir, line)
		}
	}
}
