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
	"github.com/tally-analytics/tally/internal/wire"
)

// Reports are the statistics a download reads (the stats service, which
// checks that the principal may read the site).
type Reports interface {
	Overview(ctx context.Context, p auth.Principal, r stats.Request) (stats.Overview, error)
	Pages(ctx context.Context, p auth.Principal, r stats.Request) (stats.Pages, error)
	Hostnames(ctx context.Context, p auth.Principal, r stats.Request) (stats.Hostnames, error)
	Sources(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.SourceRow], error)
	Campaigns(ctx context.Context, p auth.Principal, r stats.Request) (stats.Campaigns, error)
	Channels(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.ChannelRow], error)
	EntryPages(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.EntryRow], error)
	ExitPages(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.ExitRow], error)
	Devices(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	Browsers(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	OperatingSystems(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	Countries(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	BrowserVersions(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	OSVersions(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	Regions(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	Cities(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.Share], error)
	Events(ctx context.Context, p auth.Principal, r stats.Request) (stats.List[stats.EventRow], error)
	Conversions(ctx context.Context, p auth.Principal, r stats.Request) (stats.Conversions, error)
	Revenue(ctx context.Context, p auth.Principal, r stats.Request) (stats.RevenueReport, error)
	Funnel(ctx context.Context, p auth.Principal, r stats.Request) (stats.FunnelReport, error)
	Journeys(ctx context.Context, p auth.Principal, r stats.Request) (stats.Journeys, error)
	Retention(ctx context.Context, p auth.Principal, r stats.Request) (stats.Retention, error)
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

// read makes a reader of a method of Reports (Reports.Pages) and the
// report's wire shape (wire.Pages), the API's.
func read[R any, T Table](m func(Reports, context.Context, auth.Principal, stats.Request) (R, error), toWire func(R) T) reader {
	return func(st Reports, ctx context.Context, p auth.Principal, r stats.Request) (Table, error) {
		rep, err := m(st, ctx, p, r)
		if err != nil {
			return nil, err
		}
		return toWire(rep), nil
	}
}

// Download lists the reports of a download of r's site, range and filters:
// every report of the range, each whole (the pages report's first 1,000
// pages and the hostnames report's first 1,000 hosts, as every other list
// stops at 1,000 rows), the channels, campaigns
// by each UTM parameter, the browser's versions when r filters by a
// browser and the system's when it filters by an operating system, regions
// when r filters by a country and cities when it filters by a region (as
// the dashboard drills down), and revenue's daily series and
// its breakdowns (of r's attribution model, the default when it has none),
// the journeys of 3 steps from the entry page (the first 1,000 paths),
// the funnel of r.FunnelID when there is one, and the retention report by
// the interval the dashboard shows (stats.RetentionIntervalFor). Realtime is not of a range
// and is left out.
func Download(r stats.Request) []Report {
	attribution := cmp.Or(r.Attribution, stats.LastNonDirect)
	r.Compare, r.Limit, r.Page, r.EventName = false, stats.MaxLimit, 1, ""
	r.UTMBy, r.Breakdown, r.Attribution = "", "", ""
	// the journeys as the API answers them without steps, start or end
	journeys := r
	journeys.Steps, journeys.StartPage, journeys.EndPage = stats.DefaultJourneySteps, "", ""
	list := []Report{
		report("overview", read(Reports.Overview, wire.Overview), r),
		report("pages", read(Reports.Pages, wire.Pages), r),
		report("entry-pages", read(Reports.EntryPages, wire.EntryPages), r),
		report("exit-pages", read(Reports.ExitPages, wire.ExitPages), r),
		report("hostnames", read(Reports.Hostnames, wire.Hostnames), r),
		report("journeys", read(Reports.Journeys, wire.Journeys), journeys),
		report("sources", read(Reports.Sources, wire.Sources), r),
		report("channels", read(Reports.Channels, wire.Channels), r),
	}
	for _, by := range []string{stats.DefaultUTMBy, "utm_source", "utm_medium", "utm_content"} {
		c := r
		c.UTMBy = by
		list = append(list, report("campaigns", read(Reports.Campaigns, wire.Campaigns), c))
	}
	list = append(list,
		report("devices", read(Reports.Devices, wire.Devices), r),
		report("browsers", read(Reports.Browsers, wire.Browsers), r),
		report("operating-systems", read(Reports.OperatingSystems, wire.OperatingSystems), r),
		report("countries", read(Reports.Countries, wire.Countries), r))
	if _, ok := r.Filter(stats.Browser); ok {
		list = append(list, report("browser-versions", read(Reports.BrowserVersions, wire.BrowserVersions), r))
	}
	if _, ok := r.Filter(stats.OS); ok {
		list = append(list, report("os-versions", read(Reports.OSVersions, wire.OSVersions), r))
	}
	if _, ok := r.Filter(stats.Country); ok {
		list = append(list, report("regions", read(Reports.Regions, wire.Regions), r))
	}
	if _, ok := r.Filter(stats.Region); ok {
		list = append(list, report("cities", read(Reports.Cities, wire.Cities), r))
	}
	retention := r
	retention.Interval = stats.RetentionIntervalFor(r.DateFrom, r.DateTo)
	list = append(list,
		report("events", read(Reports.Events, wire.Events), r),
		report("conversions", read(Reports.Conversions, wire.Conversions), r),
		report("retention", read(Reports.Retention, wire.Retention), retention))
	if r.FunnelID != "" {
		// the funnel the dashboard shows, left out under a filter it
		// cannot apply (pathname)
		rep := report("funnel", read(Reports.Funnel, wire.Funnel), r)
		rep.optional = true
		list = append(list, rep)
	}
	for _, by := range []string{"", "source", "channel", "page", "campaign", "country", "device"} {
		c := r
		c.Breakdown, c.Attribution = by, attribution
		rep := report("revenue", read(Reports.Revenue, wire.Revenue), c)
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
