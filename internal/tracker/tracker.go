// Package tracker holds the browser tracking script, embedded in the binary
// and served at /js/tally.js.
package tracker

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"

	"github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/js"
)

// source is tally.js as written.
//
//go:embed tally.js
var source []byte

// Script is tally.js as served: minified (ECMAScript 2015 at most, which
// every browser with the script's URL, fetch and sendBeacon reads), a
// sixth smaller gzipped than the source without its comments. Its tests run
// it in a browser.
var Script = minified(source)

// ETag identifies this build's script for caches.
var ETag = func() string {
	sum := sha256.Sum256(Script)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// Gzipped is Script gzip-compressed once, at the best level, for the
// browsers that accept it (all of them): no page view of any site pays for
// compressing it.
var Gzipped = gzipped(Script)

// GzipETag identifies Gzipped, a representation of its own for caches.
var GzipETag = ETag[:len(ETag)-1] + `-gzip"`

// gzipped is b gzip-compressed; writing to memory cannot fail.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

// minified is src minified. src is the embedded script: an error is a
// fault of this build, which its tests find first.
func minified(src []byte) []byte {
	m := minify.New()
	m.Add("application/javascript", &js.Minifier{Version: 2015})
	out, err := m.Bytes("application/javascript", src)
	if err != nil {
		panic(fmt.Sprintf("tracker: minifying tally.js: %v", err))
	}
	return out
}
