package proto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// KeeperArg0 is the argv[0] with which wsh starts the keeper of a
// copy-on-write home: the one process that mounts the home's overlay and
// hands every jail a clone of that one mount (docs/sandbox.md, "The jail's
// home").
const KeeperArg0 = "wsh-home-keeper"

// The keeper's requests and answers, one byte each on its socket. A clone
// comes with two descriptors (SCM_RIGHTS): the mount, and its
// generation's lock, held shared.
const (
	KeeperClone    = 'C' // a detached clone of the home's mount, please
	KeeperQuit     = 'Q' // end, if nobody else is connected (wsh home reset)
	KeeperMount    = 'M' // here it is
	KeeperFailed   = 'E' // it could not be made; a 4-byte errno follows
	KeeperQuitting = 'K' // the keeper ends now
	KeeperBusy     = 'B' // others are connected: the keeper stays
)

// A KeeperSpec is what the keeper of one home is asked to do.
type KeeperSpec struct {
	// Home is the host's home: the overlay's lower layer.
	Home PathID
	// Upper and Work are the overlay's upper and work directories, in
	// wsh's state directory.
	Upper, Work PathID
	// Locks is the home's directory of locks: KeeperLockName, and
	// GensDir with a lock for each mount of the overlay.
	Locks PathID
	// SocketDir and SocketName are where the keeper listens.
	SocketDir  PathID
	SocketName string
	// Linger is how long the keeper waits, once nobody is connected,
	// before it ends.
	Linger time.Duration
	// Refresh is the age after which the keeper mounts the overlay anew
	// for the next jail, once nothing uses its mount any more: an overlay
	// caches what it has looked up in the host's home, and would go on
	// showing what the host has changed since.
	Refresh time.Duration
	// SharedSocketName, for a project's home, is the socket (in
	// SocketDir) of the keeper of the home's shared layer: each mount of
	// the project's overlay gets, at each of Caches (paths relative to
	// the home), the same directory of a clone of the shared layer's
	// mount, whose lock the keeper holds for as long as that mount
	// lives. "" for the shared layer's own keeper.
	SharedSocketName string
	Caches           []string
	// Own are directories beneath Caches that stay the project's own:
	// its overlay's, mounted back over the shared cache's.
	Own []string
}

// The lock files of a home. The keeper holds KeeperLockName exclusively
// for its life: one keeper per home. Each mount of the overlay the keeper
// makes (a generation) has a lock file of its own in GensDir; every clone
// of it comes with that lock held shared, which its user (a jail init, the
// shell's own view) holds for as long as it uses the clone. The keeper
// mounts the overlay again only once it holds the lock of the generation
// before exclusively, and a new keeper only once it holds every lock left
// in GensDir so: the upper directory is never in use by two overlay mounts
// at once (overlayfs's rule).
const (
	KeeperLockName = "keeper.lock"
	GensDir        = "gen"
)

const keeperMagic = "wsh-keep\x03"

// Encode returns the keeper spec's wire form.
func (s *KeeperSpec) Encode() ([]byte, error) {
	var e encoder
	e.b = append(e.b, keeperMagic...)
	for _, id := range []PathID{s.Home, s.Upper, s.Work, s.Locks, s.SocketDir} {
		e.id(id)
	}
	e.str(s.SocketName)
	e.u64(uint64(s.Linger))
	e.u64(uint64(s.Refresh))
	e.str(s.SharedSocketName)
	e.strs(s.Caches)
	e.strs(s.Own)
	return e.b, nil
}

// ReadKeeperSpec reads and checks a keeper spec.
func ReadKeeperSpec(r io.Reader) (*KeeperSpec, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("home keeper: spec: %w", err)
	}
	if !bytes.HasPrefix(b, []byte(keeperMagic)) {
		return nil, errors.New("home keeper: spec: malformed")
	}
	d := decoder{b: b[len(keeperMagic):]}
	var s KeeperSpec
	for _, id := range []*PathID{&s.Home, &s.Upper, &s.Work, &s.Locks, &s.SocketDir} {
		*id = d.id()
	}
	s.SocketName = d.str()
	s.Linger = time.Duration(d.u64())
	s.Refresh = time.Duration(d.u64())
	s.SharedSocketName = d.str()
	s.Caches = d.strs()
	s.Own = d.strs()
	if d.bad || len(d.b) != 0 || s.Home.Path == "" || s.SocketName == "" {
		return nil, errors.New("home keeper: spec: malformed")
	}
	return &s, nil
}
