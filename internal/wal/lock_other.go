//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package wal

import "io"

type noLock struct{}

func (noLock) Close() error { return nil }

// lockDir does nothing on systems without flock.
func lockDir(string) (io.Closer, error) {
	return noLock{}, nil
}
