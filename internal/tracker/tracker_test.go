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

// The served script is the minified source: its comments gone, its code
// kept (the browser tests run it).
func TestServedScriptIsMinified(t *testing.T) {
	if bytes.Contains(Script, []byte("a site's script included twice")) || len(Script) >= len(source)*2/3 {
		t.Errorf("the served script is %d bytes of the source's %d, comments included", len(Script), len(source))
	}
	for _, kept := range []string{`"data-tally-event-"`, `"Outbound Link: Click"`, `"analytics_vid"`, `catch(`} {
		if !bytes.Contains(Script, []byte(kept)) {
			t.Errorf("the served script lost %s", kept)
		}
	}
	// optional catch bindings (2019) would be a syntax error in older browsers
	if bytes.Contains(Script, []byte("catch{")) {
		t.Error("the served script uses a catch without its binding")
	}
}
