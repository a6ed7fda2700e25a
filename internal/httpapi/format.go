package httpapi

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/export"
)

// wantsCSV reads how a report is to be answered: the format parameter
// (json or csv) when there is one, else the Accept header (CSV when it
// prefers text/csv to application/json), else JSON. Errors are JSON either
// way.
func wantsCSV(r *http.Request) (bool, error) {
	if f, ok := r.URL.Query()["format"]; ok {
		switch f[0] {
		case "json":
			return false, nil
		case "csv":
			return true, nil
		}
		return false, errs.InvalidField("format", "must be json or csv")
	}
	accept := r.Header.Values(echo.HeaderAccept)
	return acceptQ(accept, "text/csv") > acceptQ(accept, "application/json"), nil
}

// acceptQ is the quality the Accept header gives the media type (0 when it
// does not name it; wildcards do not count: a client that takes anything
// gets the default).
func acceptQ(accept []string, media string) float64 {
	best := 0.0
	for _, header := range accept {
		for _, part := range strings.Split(header, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mt != media {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil {
					continue
				}
			}
			best = max(best, q)
		}
	}
	return best
}

// respondCSV answers a report as a CSV attachment named name. The file is
// written whole before the answer starts, so that a failure is still an
// error envelope.
func respondCSV(c echo.Context, name string, t export.Table) error {
	var buf bytes.Buffer
	if err := export.WriteCSV(&buf, t.CSVRows()); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, export.Attachment(name))
	return c.Blob(http.StatusOK, export.ContentType, buf.Bytes())
}
