//go:build !linux

package proto

import "errors"

// ErrNotSupported is returned where there is no jail.
var ErrNotSupported = errors.New("wsh: the jail needs Linux")

// NewPathID is not supported here.
func NewPathID(path string) (PathID, error) { return PathID{}, ErrNotSupported }
