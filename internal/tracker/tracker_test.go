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

// The served script drops comment lines only: a comment after code would
// be sent, or, if it were ever cut, cut with a string that holds "//".
func TestCommentsOnLinesOfTheirOwn(t *testing.T) {
	for i, line := range bytes.Split(source, []byte("\n")) {
		code := bytes.TrimSpace(line)
		if bytes.HasPrefix(code, []byte("//")) {
			continue
		}
		if bytes.Contains(code, []byte(" //")) || bytes.Contains(code, []byte("\t//")) {
			t.Errorf("tally.js:%d: a comment after code: %s", i+1, code)
		}
	}
	if bytes.Contains(Script, []byte("\n//")) || bytes.Contains(Script, []byte("\n ")) {
		t.Error("the served script still has comment lines or indentation")
	}
	if !bytes.Contains(Script, []byte("'data-tally-event-'")) || !bytes.HasSuffix(Script, []byte("})(window, document);\n")) {
		t.Error("the served script lost code")
	}
}
