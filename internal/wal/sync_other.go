//go:build !linux

package wal

import "os"

// syncData flushes f to stable storage.
func syncData(f *os.File) error {
	return f.Sync()
}
