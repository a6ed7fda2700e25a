package httpapi

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/ratelimit"
	"github.com/tally-analytics/tally/internal/stats"
)

// Exporter opens raw exports (the export service).
type Exporter interface {
	Open(ctx context.Context, p auth.Principal, r stats.Request) (*export.EventExport, error)
}

// RecordsTrailer is the trailer that ends a complete export with the number
// of records it holds. An export that fails after it began has no trailer,
// and no end either: the connection is cut (see abortAnswer).
const RecordsTrailer = "X-Export-Records"

// ExportLimitKey names the export allowance of a caller's account: its API
// keys and login tokens share it.
func ExportLimitKey(p auth.Principal) string { return "exports:account:" + string(p.UserID) }

func (s *Server) exportRoutes(g *echo.Group, mw ...echo.MiddlewareFunc) {
	g.GET("/export/events", s.exportEvents, mw...)
}

// exportEvents streams a site's raw events. Whatever goes wrong before the
// first byte (parameters, access, the limit, a store) is an error envelope;
// the limit counts only exports that pass the checks.
func (s *Server) exportEvents(c echo.Context) error {
	h := c.Response().Header()
	h.Add(echo.HeaderVary, echo.HeaderAccept)
	h.Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	format, err := exportFormat(c.Request())
	if err != nil {
		return err
	}
	req, err := stats.ParseRequest(c.QueryParams(), export.EventsEndpoint)
	if err != nil {
		return err
	}
	p := principal(c)
	x, err := s.deps.Export.Open(c.Request().Context(), p, req)
	if err != nil {
		return err
	}
	if err := s.checkLimit(c, limitExportsName, ExportLimitKey(p), ratelimit.PerHour(s.deps.Limits.ExportsPerHour), 1); err != nil {
		return err
	}
	body := newStreamBody(c, format.ContentType(), export.EventsFileName(req, format),
		acceptQ(c.Request().Header.Values(echo.HeaderAcceptEncoding), "gzip") > 0)
	enc, err := export.NewEventEncoder(format, body)
	if err != nil {
		return err
	}
	n, err := x.WriteTo(c.Request().Context(), enc, nil)
	if err != nil {
		return err
	}
	return body.finish(n)
}

// exportFormat reads the format of an export: the format parameter (ndjson
// or csv), else the Accept header (CSV when it prefers text/csv to NDJSON),
// else NDJSON.
func exportFormat(r *http.Request) (export.Format, error) {
	if f, ok := r.URL.Query()["format"]; ok {
		return export.ParseFormat(f[0])
	}
	accept := r.Header.Values(echo.HeaderAccept)
	if acceptQ(accept, "text/csv") > acceptQ(accept, export.NDJSONType) {
		return export.CSV, nil
	}
	return export.NDJSON, nil
}

// streamWriteTimeout is how long a streamed answer waits for a client that
// does not read before it gives up on it.
const streamWriteTimeout = 30 * time.Second

// errClientGone marks a failed write of an answer: the client went away or
// stopped reading. Nobody is left to answer, and nothing is broken.
var errClientGone = errors.New("the client stopped reading the answer")

// streamBody is the body of a streamed answer. It commits the answer (its
// status and headers) at the first byte written, so that a failure before
// any is still an error envelope; compresses when the client accepts gzip;
// and replaces the server's write timeout, made for whole answers, with one
// that runs from each write.
type streamBody struct {
	c           echo.Context
	rc          *http.ResponseController
	gz          *gzip.Writer
	contentType string
	fileName    string
	committed   bool
	extended    time.Time
}

func newStreamBody(c echo.Context, contentType, fileName string, compress bool) *streamBody {
	b := &streamBody{c: c, rc: http.NewResponseController(c.Response()), contentType: contentType, fileName: fileName}
	// until the first byte, the time the stores take is not the client's
	_ = b.rc.SetWriteDeadline(time.Time{})
	if compress {
		b.gz, _ = gzip.NewWriterLevel(writerFunc(b.write), gzip.BestSpeed)
	}
	return b
}

// Write takes the body, compressing it when asked to.
func (b *streamBody) Write(p []byte) (int, error) {
	if b.gz != nil {
		return b.gz.Write(p)
	}
	return b.write(p)
}

// Flush sends what is written so far to the client.
func (b *streamBody) Flush() error {
	if b.gz != nil {
		if err := b.gz.Flush(); err != nil {
			return err
		}
	}
	b.commit()
	b.extend()
	if err := b.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("%w: %w", errClientGone, err)
	}
	return nil
}

// finish ends a complete answer: the end of the compressed stream, and the
// trailer with the number of records.
func (b *streamBody) finish(records int64) error {
	if b.gz != nil {
		if err := b.gz.Close(); err != nil {
			return err
		}
	}
	b.commit() // an empty export is an answer too
	b.c.Response().Header().Set(RecordsTrailer, strconv.FormatInt(records, 10))
	return nil
}

func (b *streamBody) commit() {
	if b.committed {
		return
	}
	b.committed = true
	h := b.c.Response().Header()
	h.Set(echo.HeaderContentType, b.contentType)
	h.Set(echo.HeaderContentDisposition, export.Attachment(b.fileName))
	if b.gz != nil {
		h.Set(echo.HeaderContentEncoding, "gzip")
	}
	h.Set("Trailer", RecordsTrailer)
	b.c.Response().WriteHeader(http.StatusOK)
}

func (b *streamBody) write(p []byte) (int, error) {
	b.commit()
	b.extend()
	n, err := b.c.Response().Write(p)
	if err != nil {
		return n, fmt.Errorf("%w: %w", errClientGone, err)
	}
	return n, nil
}

// extend moves the write deadline to streamWriteTimeout from now, at most
// once a second rather than at every write.
func (b *streamBody) extend() {
	if now := time.Now(); now.Sub(b.extended) >= time.Second {
		_ = b.rc.SetWriteDeadline(now.Add(streamWriteTimeout))
		b.extended = now
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
