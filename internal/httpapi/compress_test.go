package httpapi

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// gunzip is b decompressed.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The compressor's choices: a text answer of MinCompressed bytes or more
// is gzipped when the client accepts gzip, and decodes to the answer
// without it; a shorter one, one of a compressed type, one encoded already,
// one without body and one for a client that refuses gzip go as they are;
// every one says Vary: Accept-Encoding.
func TestCompressor(t *testing.T) {
	long := strings.Repeat(`{"page":"/pricing","visitors":12},`, 100) // 3,400 bytes
	for _, tc := range []struct {
		name, accept, ctype, preset string
		status                      int
		body                        string
		gzipped                     bool
	}{
		{"json", "gzip, deflate, br", "application/json", "", 200, long, true},
		{"csv", "gzip", "text/csv; charset=utf-8", "", 200, long, true},
		{"html of an error", "gzip", "text/html; charset=UTF-8", "", 422, long, true},
		{"exactly the least", "gzip", "application/json", "", 200, long[:MinCompressed], true},
		{"one byte short", "gzip", "application/json", "", 200, long[:MinCompressed-1], false},
		{"not accepted", "", "application/json", "", 200, long, false},
		{"refused", "gzip;q=0, br", "application/json", "", 200, long, false},
		{"identity", "identity", "application/json", "", 200, long, false},
		{"a zip", "gzip", "application/zip", "", 200, long, false},
		{"an image", "gzip", "image/png", "", 200, long, false},
		{"encoded already", "gzip", "application/x-ndjson", "br", 200, long, false},
		{"no body", "gzip", "application/json", "", 204, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := echo.New()
			e.GET("/", func(c echo.Context) error {
				if tc.preset != "" {
					c.Response().Header().Set(echo.HeaderContentEncoding, tc.preset)
				}
				if tc.body == "" {
					return c.NoContent(tc.status)
				}
				return c.Blob(tc.status, tc.ctype, []byte(tc.body))
			}, NewCompressor().Middleware)
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			enc := rec.Header().Get("Content-Encoding")
			if rec.Code != tc.status || (enc == "gzip") != tc.gzipped || rec.Header().Get("Vary") != "Accept-Encoding" {
				t.Fatalf("%d, Content-Encoding %q, Vary %q; want %d, gzipped %v, Vary Accept-Encoding", rec.Code, enc,
					rec.Header().Get("Vary"), tc.status, tc.gzipped)
			}
			got := rec.Body.Bytes()
			if tc.gzipped {
				got = gunzip(t, got)
				if rec.Body.Len() >= len(tc.body) {
					t.Errorf("gzipped %d bytes into %d", len(tc.body), rec.Body.Len())
				}
			}
			if string(got) != tc.body {
				t.Errorf("the body is %d bytes, want the %d sent", len(got), len(tc.body))
			}
		})
	}
}

// A compressed stream still flushes: what a handler flushed reaches the
// client, decodable, while the handler waits for the client to have read
// it.
func TestCompressorFlushes(t *testing.T) {
	read := make(chan struct{})
	e := echo.New()
	e.GET("/", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderContentType, "application/x-ndjson")
		c.Response().WriteHeader(http.StatusOK)
		io.WriteString(c.Response(), "{\"n\":1}\n")
		c.Response().Flush()
		<-read // the client has the first line: nothing was held back
		io.WriteString(c.Response(), "{\"n\":2}\n")
		return nil
	}, NewCompressor().Middleware)
	srv := httptest.NewServer(e)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body compressed
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(zr)
	first, err := lines.ReadString('\n')
	close(read)
	if err != nil || first != "{\"n\":1}\n" {
		t.Fatalf("the first line: %q, %v", first, err)
	}
	rest, err := io.ReadAll(lines)
	if err != nil || string(rest) != "{\"n\":2}\n" {
		t.Fatalf("the rest: %q, %v", rest, err)
	}
}
