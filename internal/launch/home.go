//go:build linux && cgo

package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// A HomePlan says where a copy-on-write home comes from: the host's home
// directory, which jails see through it, and wsh's state directory, where
// what jailed commands write to it is kept.
type HomePlan struct {
	Home  string // the host's home directory, absolute and resolved
	State string // wsh's state directory: $XDG_STATE_HOME/wsh
	// Project is the project whose own layer keeps what jailed commands
	// write to the home, but for the caches (SharedCaches): the start
	// directory, resolved. "" is the home's shared layer, which holds the
	// caches of every project.
	Project string
	// Scope is what the project's runs may do (their writable paths, the
	// network) and the start directory's identity: a layer is one
	// project's in one scope.
	Scope string
	// layerDir, where set (Layers), is the layer's directory as found.
	layerDir string
}

// SharedCaches are the home's directories, relative to it, that every
// project's jails share: package and build caches, which hold what a tool
// fetched or built by its content, not code a tool runs by itself. Each
// jail of a project sees them from the home's shared layer, where what
// any project's jails write to them is kept (docs/config.md, WSH_HOME).
var SharedCaches = []string{
	".cache/go-build", // go's build cache (GOCACHE's default)
	"go/pkg/mod",      // go's module cache (GOMODCACHE's default)
	".npm/_cacache",   // npm's cache (not _npx: the packages npx runs, installed)
	".cache/pip",      // pip's cache
	".cargo/registry", // cargo's crates
	".cargo/git",      // cargo's git dependencies
	".m2/repository",  // maven's repository
}

// OwnInCaches are directories beneath SharedCaches that stay each
// project's own: git repositories a tool runs git in (go's for modules
// fetched from their origin, GOPRIVATE or GOPROXY=direct; cargo's with
// net.git-fetch-with-cli), whose hooks and config git would run in
// another project's jail (the fourth review).
var OwnInCaches = []string{
	"go/pkg/mod/cache/vcs",
	".cargo/git/db",
}

// KeeperLinger is how long a home's keeper stays once no wsh is connected:
// a wsh started soon after finds it and does not pay for a new one.
const KeeperLinger = 10 * time.Second

// Dir is this home's own directory in the state directory: one per home
// path, so that two homes that share a state directory do not share an
// upper directory.
func (p HomePlan) Dir() string {
	if p.layerDir != "" {
		return p.layerDir
	}
	if p.Project == "" {
		return p.homeDir()
	}
	sum := sha256.Sum256([]byte(p.Project + "\x00" + p.Scope))
	return filepath.Join(p.homeDir(), ProjectsDir, hex.EncodeToString(sum[:8]))
}

// homeDir is the home's directory, where its shared layer is kept, and
// its projects' layers beneath ProjectsDir.
func (p HomePlan) homeDir() string {
	sum := sha256.Sum256([]byte(p.Home))
	return filepath.Join(p.State, "home", hex.EncodeToString(sum[:8]))
}

// ProjectsDir is the directory of the projects' layers in a home's
// directory; each project's has a file ProjectFile naming the project.
const (
	ProjectsDir = "projects"
	ProjectFile = "project"
)

// Shared is the plan of the home's shared layer: the caches' home.
func (p HomePlan) Shared() HomePlan {
	p.Project, p.Scope = "", ""
	return p
}

// Upper is the overlay's upper directory: what jailed commands wrote to
// the home, by the home's own relative paths.
func (p HomePlan) Upper() string { return filepath.Join(p.Dir(), "upper") }

// Work is the overlay's work directory.
func (p HomePlan) Work() string { return filepath.Join(p.Dir(), "work") }

// socketDir is where the homes' keepers of this uid listen: in the host's
// /dev/shm, in a directory of this uid's own. Every jail has a /dev/shm of
// its own, so no jailed command can reach it, whatever its settings.
func socketDir() string { return fmt.Sprintf("/dev/shm/wsh-keeper-%d", os.Getuid()) }

// socketName is the name of the keeper's socket for the home's directory
// whose identity is dev and ino: a directory put in the place of another
// (renamed away, and a new one made) has another keeper, and another
// upper directory.
func (p HomePlan) socketName(dev, ino uint64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", p.Dir(), dev, ino)))
	return hex.EncodeToString(sum[:8]) + ".sock"
}
