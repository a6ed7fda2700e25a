package tracker

import (
	"bytes"
	"compress/gzip"
	"testing"
)

func TestScriptIsSmall(t *testing.T) {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zw.Write(Script)
	zw.Close()
	t.Logf("tally.js: %d bytes, %d gzipped", len(Script), b.Len())
	if b.Len() >= 2048 {
		t.Errorf("tally.js is %d bytes gzipped, want < 2 KB", b.Len())
	}
}
