//go:build !linux

package proto

// NewPathID is not supported here.
func NewPathID(path string) (PathID, error) { return PathID{}, ErrNotSupported }
