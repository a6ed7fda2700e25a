package export

import (
	"archive/zip"
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// Reports are the statistics a download reads (the stats service, which
// checks that the principal may read the site).
type Reports interface {
	Overview(ctx context.Context, p auth.Principal, r stats.Request) (api.OverviewResponse, error)
	Pages(ctx context.Context, p auth.Principal, r stats.Request) (api.PagesResponse, error)
	Sources(ctx context.Context, p auth.Principal, r stats.Request) (api.SourcesResponse, error)
	Campaigns(ctx context.Context, p auth.Principal, r stats.Request) (api.CampaignsResponse, error)
	EntryPages(ctx context.Context, p auth.Principal, r stats.Request) (api.EntryPagesResponse, error)
	ExitPages(ctx context.Context, p auth.Principal, r stats.Request) (api.ExitPagesResponse, error)
	Devices(ctx context.Context, p auth.Principal, r stats.Request) (api.DevicesResponse, error)
	Browsers(ctx context.Context, p auth.Principal, r stats.Request) (api.BrowsersResponse, error)
	OperatingSystems(ctx context.Context, p auth.Principal, r stats.Request) (api.OperatingSystemsResponse, error)
	Countries(ctx context.Context, p auth.Principal, r stats.Request) (api.CountriesResponse, error)
	Regions(ctx context.Context, p auth.Principal, r stats.Request) (api.RegionsResponse, error)
	Cities(ctx context.Context, p auth.Principal, r stats.Request) (api.CitiesResponse, error)
	Events(ctx context.Context, p auth.Principal, r stats.Request) (api.EventsResponse, error)
	Conversions(ctx context.Context, p auth.Principal, r stats.Request) (api.ConversionsResponse, error)
	Revenue(ctx context.Context, p auth.Principal, r stats.Request) (api.RevenueResponse, error)
	Funnel(ctx context.Context, p auth.Principal, r stats.Request) (api.FunnelReportResponse, error)
}

// Report is one file of a download: a report read with its request.
type Report struct {
	// Name is the report's name with its variant (see Name); the file is
	// Name.csv, the API's CSV of the report for Request.
	Name    string
	Request stats.Request
	read    reader
	// optional reports are left out of a download whose filters they cannot
	// apply (revenue knows a payment's visit, not every page or browser of it)
	optional bool
}

// reader reads a report.
type reader func(Reports, context.Context, auth.Principal, stats.Request) (Table, error)

// read makes a reader of a method of Reports (Reports.Pages).
func read[T Table](m func(Reports, context.Context, auth.Principal, stats.Request) (T, error)) reader {
	return func(st Reports, ctx context.Context, p auth.Principal, r stats.Request) (Table, error) {
		return m(st, ctx, p, r)
	}
}

// Download lists the reports of a download of r's site, range and filters:
// every report of the range, each whole (the pages report's first 1,000
// pages, as every other list stops at 1,000 rows), campaigns by each UTM
// parameter, regions when r filters by a country and cities when it filters
// by a region (as the dashboard drills down), and revenue's daily series and
// its breakdowns (of r's attribution model, the default when it has none),
// and the funnel of r.FunnelID when there is one. Realtime is not of a range
// and is left out.
func Download(r stats.Request) []Report {
	attribution := cmp.Or(r.Attribution, stats.LastNonDirect)
	r.Compare, r.Limit, r.Page, r.EventName = false, stats.MaxLimit, 1, ""
	r.UTMBy, r.Breakdown, r.Attribution = "", "", ""
	list := []Report{
		report("overview", read(Reports.Overview), r),
		report("pages", read(Reports.Pages), r),
		report("entry-pages", read(Reports.EntryPages), r),
		report("exit-pages", read(Reports.ExitPages), r),
		report("sources", read(Reports.Sources), r),
	}
	for _, by := range []string{stats.DefaultUTMBy, "utm_source", "utm_medium", "utm_content"} {
		c := r
		c.UTMBy = by
		list = append(list, report("campaigns", read(Reports.Campaigns), c))
	}
	list = append(list,
		report("devices", read(Reports.Devices), r),
		report("browsers", read(Reports.Browsers), r),
		report("operating-systems", read(Reports.OperatingSystems), r),
		report("countries", read(Reports.Countries), r))
	if _, ok := r.Filter(stats.Country); ok {
		list = append(list, report("regions", read(Reports.Regions), r))
	}
	if _, ok := r.Filter(stats.Region); ok {
		list = append(list, report("cities", read(Reports.Cities), r))
	}
	list = append(list,
		report("events", read(Reports.Events), r),
		report("conversions", read(Reports.Conversions), r))
	if r.FunnelID != "" {
		// the funnel the dashboard shows, left out under a filter it
		// cannot apply (pathname)
		rep := report("funnel", read(Reports.Funnel), r)
		rep.optional = true
		list = append(list, rep)
	}
	for _, by := range []string{"", "source", "page", "campaign", "country", "device"} {
		c := r
		c.Breakdown, c.Attribution = by, attribution
		rep := report("revenue", read(Reports.Revenue), c)
		rep.optional = true
		list = append(list, rep)
	}
	return list
}

func report(name string, read reader, r stats.Request) Report {
	return Report{Name: Name(name, r), Request: r, read: read}
}

// Zip reads the reports as p and writes them to w as a zip of CSV files
// (Name.csv each, modified at the given time). An optional report that
// refuses the filters is left out; any other error ends the download.
func Zip(ctx context.Context, w io.Writer, st Reports, p auth.Principal, reports []Report, modified time.Time) error {
	zw := zip.NewWriter(w)
	for _, rep := range reports {
		t, err := rep.read(st, ctx, p, rep.Request)
		if rep.optional && errs.Is(err, errs.Invalid) {
			continue
		}
		if err != nil {
			return fmt.Errorf("export: %s: %w", rep.Name, err)
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: rep.Name + ".csv", Method: zip.Deflate, Modified: modified})
		if err != nil {
			return fmt.Errorf("export: %s: %w", rep.Name, err)
		}
		if err := WriteCSV(f, t.CSVRows()); err != nil {
			return fmt.Errorf("export: %s: %w", rep.Name, err)
		}
	}
	return zw.Close()
}
