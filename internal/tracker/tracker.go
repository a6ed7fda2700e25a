// Package tracker holds the browser tracking script, embedded in the binary
// and served at /js/tally.js.
package tracker

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// source is tally.js as written, every comment on a line of its own.
//
//go:embed tally.js
var source []byte

// Script is tally.js as served: the source without its comment lines, its
// indentation and its blank lines, which is a quarter of its gzipped size.
// Lines stay lines, so no statement runs into the next.
var Script = compact(source)

// ETag identifies this build's script for caches.
var ETag = func() string {
	sum := sha256.Sum256(Script)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// compact drops the lines of src that are empty or a // comment and the
// indentation of the others.
func compact(src []byte) []byte {
	var out []byte
	for line := range bytes.Lines(src) {
		line = bytes.TrimLeft(line, " \t")
		if t := bytes.TrimSpace(line); len(t) == 0 || bytes.HasPrefix(t, []byte("//")) {
			continue
		}
		out = append(out, line...)
	}
	return out
}
