package httpapi

import (
	"compress/gzip"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"
)

// MinCompressed is the least body worth compressing: below about a packet,
// gzip's header and the CPU buy nothing.
const MinCompressed = 1024

// Compressor gzips answers, as a middleware attached to the routes whose
// answers gain by it (the API's reads and the dashboard), never to the
// ingest routes, which are not wrapped at all. One rule for both.
type Compressor struct {
	writers sync.Pool // *gzip.Writer, reused: each holds a few hundred KB
}

// NewCompressor makes a Compressor.
func NewCompressor() *Compressor {
	return &Compressor{writers: sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression) // a valid level: no error
		return w
	}}}
}

// AcceptsGzip reports whether the request's Accept-Encoding takes gzip
// (named, with a quality above 0).
func AcceptsGzip(r *http.Request) bool {
	return acceptQ(r.Header.Values(echo.HeaderAcceptEncoding), "gzip") > 0
}

// Middleware compresses an answer with gzip when the request accepts it,
// its type is text (HTML, JSON, CSV, JavaScript, CSS, SVG), it has no
// Content-Encoding of its own and its body reaches MinCompressed bytes
// (it is held until then, so a short answer goes as it is). A flush sends
// what is compressed so far: a stream stays a stream. Every answer of such
// a route says Vary: Accept-Encoding.
func (z *Compressor) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		res.Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
		if !AcceptsGzip(c.Request()) {
			return next(c)
		}
		w := &gzipWriter{ResponseWriter: res.Writer, z: z}
		res.Writer = w
		defer func() { res.Writer = w.ResponseWriter }() // the error handler writes past it
		err := next(c)
		if ferr := w.finish(); ferr != nil && err == nil {
			err = ferr
		}
		return err
	}
}

// gzipWriter holds an answer's first bytes until it knows whether to
// compress it.
type gzipWriter struct {
	http.ResponseWriter
	z       *Compressor
	status  int
	held    []byte
	decided bool
	gz      *gzip.Writer // when compressing
}

func (w *gzipWriter) WriteHeader(code int) {
	if w.decided {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if !w.decided {
		if !w.compressible() {
			w.decide(false)
		} else if w.held = append(w.held, p...); len(w.held) < MinCompressed {
			return len(p), nil
		} else {
			held := w.held
			w.held = nil
			w.decide(true)
			if _, err := w.gz.Write(held); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return w.write(p)
}

// Flush sends what is written so far: a body not yet decided is
// compressed if it may be, as more may follow.
func (w *gzipWriter) Flush() {
	_ = w.FlushError()
}

// FlushError is Flush, with the error of a client gone (see
// http.ResponseController).
func (w *gzipWriter) FlushError() error {
	if !w.decided {
		held := w.held
		w.held = nil
		w.decide(w.compressible())
		if _, err := w.write(held); err != nil {
			return err
		}
	}
	if w.gz != nil {
		if err := w.gz.Flush(); err != nil {
			return err
		}
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the answer: a short body goes as it is, a compressed one
// gets the end of its stream. Nothing written, nothing is sent: the error
// handler answers.
func (w *gzipWriter) finish() error {
	if !w.decided && (w.status != 0 || w.held != nil) {
		held := w.held
		w.held = nil
		w.decide(false)
		if _, err := w.ResponseWriter.Write(held); err != nil {
			return err
		}
	}
	if w.gz == nil {
		return nil
	}
	err := w.gz.Close()
	w.gz.Reset(nil)
	w.z.writers.Put(w.gz)
	w.gz = nil
	return err
}

func (w *gzipWriter) write(p []byte) (int, error) {
	if w.gz != nil {
		return w.gz.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// decide writes the status line and the headers, compressed or not.
func (w *gzipWriter) decide(compress bool) {
	w.decided = true
	if compress {
		h := w.Header()
		h.Set(echo.HeaderContentEncoding, "gzip")
		h.Del(echo.HeaderContentLength)
		w.gz = w.z.writers.Get().(*gzip.Writer)
		w.gz.Reset(w.ResponseWriter)
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.WriteHeader(w.status)
}

// compressible reports whether the answer as it stands may be compressed:
// of a text type, not encoded already, with a whole body (not a partial
// one, nor an answer without any).
func (w *gzipWriter) compressible() bool {
	h := w.Header()
	switch {
	case w.status == http.StatusNoContent, w.status == http.StatusPartialContent, w.status == http.StatusNotModified,
		h.Get(echo.HeaderContentEncoding) != "":
		return false
	}
	return textType(h.Get(echo.HeaderContentType))
}

// textType reports whether a Content-Type is text, which gzip shrinks
// (zip archives, images and fonts are compressed already).
func textType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/x-ndjson", "application/xml", "image/svg+xml":
		return true
	}
	return false
}
