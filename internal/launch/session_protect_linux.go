//go:build linux && cgo

package launch

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"wsh/degrade"
	"wsh/internal/proto"
)

// Protect has the session's init bind pins onto themselves and paths
// read-only onto themselves in its live jail (proto.MsgProtect), as its
// setup did with the protection it was made with, and waits for the
// answer: nil once every one is bound; an error naming the errno when the
// init could not (what it bound before the failure stays bound), or when
// the session has ended. Only the full rung's init has the mounts to do it.
func (s *Session) Protect(ctx context.Context, pins, paths []proto.PathID) error {
	if s.rung != degrade.RungFull {
		return fmt.Errorf("protect in place: the %s rung's session has no mounts", s.rung)
	}
	b, err := proto.EncodeProtection(pins, paths)
	if err != nil {
		return err
	}
	mf, err := memFile(b)
	if err != nil {
		return err
	}
	defer mf.Close()
	ch := make(chan proto.SessionMsg, 1)
	s.mu.Lock()
	select {
	case <-s.end:
		s.mu.Unlock()
		return ErrSessionEnded
	default:
	}
	s.id++
	id := s.id
	s.wait[id] = ch
	s.mu.Unlock()
	s.wmu.Lock()
	err = unix.Sendmsg(s.fd, proto.SessionMsg{Kind: proto.MsgProtect, ID: id}.Encode(), unix.UnixRights(int(mf.Fd())), nil, unix.MSG_NOSIGNAL)
	s.wmu.Unlock()
	if err != nil {
		s.forget(id)
		return os.NewSyscallError("sendmsg", err)
	}
	select {
	case m := <-ch:
		if m.Kind == proto.MsgProtected {
			return nil
		}
		return fmt.Errorf("the session's init could not bind them: %w", syscall.Errno(m.Value))
	case <-s.end:
		select {
		case m := <-ch:
			if m.Kind == proto.MsgProtected {
				return nil
			}
		default:
		}
		return ErrSessionEnded
	case <-ctx.Done():
		s.forget(id)
		return ctx.Err()
	}
}
