package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

func TestWantsCSV(t *testing.T) {
	for _, tc := range []struct {
		query, accept string
		csv           bool
		field         string // of the 400, "" when none
	}{
		{"", "", false, ""},
		{"format=json", "", false, ""},
		{"format=csv", "", true, ""},
		{"format=json", "text/csv", false, ""},
		{"format=csv", "application/json", true, ""},
		{"format=xml", "", false, "format"},
		{"format=", "text/csv", false, "format"},
		{"format=CSV", "", false, "format"},
		{"", "text/csv", true, ""},
		{"", "text/csv; charset=utf-8", true, ""},
		{"", "application/json", false, ""},
		{"", "*/*", false, ""},
		{"", "text/*", false, ""},
		{"", "text/csv, application/json", false, ""}, // no preference: the default
		{"", "application/json;q=0.5, text/csv", true, ""},
		{"", "text/csv;q=0.4, application/json;q=0.9", false, ""},
		{"", "text/csv;q=0.9, */*;q=0.1", true, ""},
		{"", "text/csv;q=nonsense", false, ""},
		{"", "garbage;;", false, ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/stats/pages?"+tc.query, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		csv, err := wantsCSV(req)
		var e *errs.Error
		switch {
		case tc.field != "" && !(errors.As(err, &e) && e.Kind == errs.Invalid && e.Field == tc.field):
			t.Errorf("?%s, Accept %q: %v, want a 400 naming %s", tc.query, tc.accept, err, tc.field)
		case tc.field == "" && (err != nil || csv != tc.csv):
			t.Errorf("?%s, Accept %q: csv %v, %v; want %v", tc.query, tc.accept, csv, err, tc.csv)
		}
	}
}

// reportStats answers the pages report with fixed rows and every sources
// report with an error.
type reportStats struct{ Stats }

// depth is a page's scroll depth in percent; a page without one is an empty cell.
var depth int64 = 75

func (reportStats) Pages(_ context.Context, _ auth.Principal, r stats.Request) (stats.Pages, error) {
	return stats.Pages{Meta: stats.Meta{Site: r.SiteID}, Rows: []stats.PageRow{
		{Path: "/a,b", Pageviews: 2, Visitors: 1, BounceRate: 50, AvgTimeOnPage: 1.5, ScrollDepth: &depth},
		{Path: "/ü", Pageviews: 1, Visitors: 1}}}, nil
}

func (reportStats) Sources(context.Context, auth.Principal, stats.Request) (stats.List[stats.SourceRow], error) {
	return stats.List[stats.SourceRow]{}, errs.E(errs.NotFound, "site_not_found", "site not found")
}

// The stats handler answers CSV when asked, and errors as JSON either way.
func TestReportCSV(t *testing.T) {
	s := New(Deps{Auth: stubAuth{}, Stats: reportStats{}, Limiter: allowAll{}, Log: discardLog()})
	get := func(path, accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer good")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	const q = "?site_id=site1&date_from=2026-05-01&date_to=2026-05-07"
	wantCSV := "pathname,pageviews,visitors,bounce_rate,avg_time_on_page,scroll_depth\r\n\"/a,b\",2,1,50,1.5,75\r\n/ü,1,1,0,0,\r\n"
	for _, tc := range []struct{ path, accept string }{{"/api/v1/stats/pages" + q + "&format=csv", ""}, {"/api/v1/stats/pages" + q, "text/csv"}} {
		rec := get(tc.path, tc.accept)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" || rec.Body.String() != wantCSV {
			t.Errorf("%s (Accept %q): %d %s\n%q", tc.path, tc.accept, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="pages-site1-2026-05-01-2026-05-07.csv"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		if vary := strings.Join(rec.Header().Values("Vary"), ", "); vary != "Accept-Encoding, Accept" {
			t.Errorf("Vary %q, want Accept-Encoding (the compression's) and Accept", vary)
		}
	}
	if rec := get("/api/v1/stats/pages"+q, ""); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("without a format: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}

	for _, tc := range []struct {
		path, accept string
		status       int
		code, field  string
	}{
		{"/api/v1/stats/pages" + q + "&format=xlsx", "", 400, "invalid_request", "format"},
		{"/api/v1/stats/pages?site_id=site1&format=csv", "text/csv", 400, "invalid_request", "date_from"},
		{"/api/v1/stats/sources" + q + "&format=csv", "text/csv", 404, "site_not_found", ""},
		{"/api/v1/stats/sources" + q, "text/csv", 404, "site_not_found", ""},
	} {
		rec := get(tc.path, tc.accept)
		var body api.Error
		err := json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != tc.status || rec.Header().Get("Content-Type") != "application/json" || err != nil ||
			body.Error.Code != tc.code || body.Error.Field != tc.field || rec.Header().Get("Content-Disposition") != "" {
			b, _ := io.ReadAll(rec.Body)
			t.Errorf("%s: %d %s %s, want %d %s (field %q) as JSON", tc.path, rec.Code, rec.Header().Get("Content-Type"), b,
				tc.status, tc.code, tc.field)
		}
	}
}
