//go:build linux && cgo

package protect

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Hollow says that p holds nothing for a program on the host to run: it
// is not there, or is an empty directory or an empty file (a full rung's
// run makes such placeholders, in /tmp for all, and removes them at its
// end: a lower rung's run, which makes none, would otherwise take them
// for a command's doing). Only a name wsh makes, of a kind it makes it
// as (madeAs): an empty .config/fish is said, as is an empty file .git
// (it breaks the host's git below it) or a node_modules directory (it
// moves npm's prefix). A symlink is not hollow.
func Hollow(p string) bool {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return true
	case err != nil:
		return false
	case fi.IsDir() && !slices.Contains(madeAs(filepath.Base(p)), makeDir),
		fi.Mode().IsRegular() && !slices.Contains(madeAs(filepath.Base(p)), makeEmptyFile):
		return false // not what wsh makes of that name
	case fi.Mode().IsRegular():
		return fi.Size() == 0
	case !fi.IsDir():
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// madeAs is what wsh makes of a protected name where it is missing, in
// any of its tables: the parent names, the project's names (each an
// empty directory), the home's and its tools'.
func madeAs(name string) []placeholder {
	var out []placeholder
	if k := parentKind(name); k != makeNone {
		out = append(out, k)
	}
	if placeholderNames[name] != 0 {
		out = append(out, makeDir)
	}
	for _, k := range []placeholder{homePlaceholders[name], homeToolFiles[name]} {
		if k != makeNone {
			out = append(out, k)
		}
	}
	return out
}
