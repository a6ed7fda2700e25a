package web

import (
	"bytes"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/export"
)

// download answers every report of the view's range and filters as one zip
// of CSV files, each the API's CSV of the report. It is open to whoever may
// see the dashboard, and its reports count against the allowance as cards do.
func (s *Server) download(c echo.Context) error {
	c.Response().Header().Set("X-Robots-Tag", "noindex")
	_, p, v, err := s.memberView(c)
	if err != nil {
		return err
	}
	r := v.request()
	reports := export.Download(r)
	if err := s.limitStats(c, p, len(reports)); err != nil {
		return err
	}
	// written whole before the answer starts, so that a failure is an error
	// page (the link is a plain link, not a download one, for the browser
	// to show it)
	var buf bytes.Buffer
	if err := export.Zip(c.Request().Context(), &buf, s.deps.Stats, p, reports, s.deps.Now()); err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentDisposition, export.Attachment(export.ZipName(r)))
	return c.Blob(http.StatusOK, "application/zip", buf.Bytes())
}

// DownloadURL is the URL of the download of the view's reports.
func (v view) DownloadURL() string {
	return sitePath(v.Site.ID) + "/download?" + v.Query()
}
