// Package tracker holds the browser tracking script, embedded in the binary
// and served at /js/tally.js.
package tracker

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// Script is tally.js.
//
//go:embed tally.js
var Script []byte

// ETag identifies this build's script for caches.
var ETag = func() string {
	sum := sha256.Sum256(Script)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()
