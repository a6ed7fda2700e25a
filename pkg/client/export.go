package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// ExportParams are the parameters of the raw event export. Empty fields
// are not sent.
type ExportParams struct {
	SiteID   string
	DateFrom string // YYYY-MM-DD, inclusive
	DateTo   string // YYYY-MM-DD, inclusive; may equal DateFrom
	Timezone string // IANA name of the days; default: the site's
	Format   string // "ndjson" (the default) or "csv"
}

// ErrIncompleteExport is an export that ended without the server's count
// of its records: what was written is not the whole export.
var ErrIncompleteExport = errors.New("tally: the export ended before it was complete")

// ExportEvents streams a site's raw events (GET /api/v1/export/events) to
// w, one record per stored event: NDJSON lines of api.ExportedEvent, or
// CSV with a header row. The answer travels gzip-compressed; w gets the
// records themselves. The download is bounded by ctx only, not by the
// client's timeout. It returns the number of records the server sent. An
// export that fails part way is an error (the server cuts the answer
// short), after w got what came before.
func (c *Client) ExportEvents(ctx context.Context, p ExportParams, w io.Writer) (int64, error) {
	q := url.Values{}
	for k, v := range map[string]string{"site_id": p.SiteID, "date_from": p.DateFrom, "date_to": p.DateTo,
		"timezone": p.Timezone, "format": p.Format} {
		if v != "" {
			q.Set(k, v)
		}
	}
	hc := *c.http
	hc.Timeout = 0
	resp, err := c.sendWith(ctx, &hc, http.MethodGet, "/api/v1/export/events", q, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return 0, fmt.Errorf("tally: export: %w", err)
	}
	n, err := strconv.ParseInt(resp.Trailer.Get("X-Export-Records"), 10, 64)
	if err != nil {
		return 0, ErrIncompleteExport
	}
	return n, nil
}
