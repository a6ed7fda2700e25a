package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

func write(t *testing.T, rows any) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// Quoting follows RFC 4180 and every value comes back as it went in
// (but for the quote that disarms a formula).
func TestWriteCSVQuotingAndFormulas(t *testing.T) {
	rows := []api.EventRow{
		{EventName: "plain", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 12.5},
		{EventName: "a,b", TotalCount: 2},
		{EventName: `say "hi"`},
		{EventName: "line one\nline two"},
		{EventName: "crlf\r\nend"},
		{EventName: "Café ☕ 日本語 — ünïcode"},
		{EventName: " leading space"},
		{EventName: "=HYPERLINK(\"http://evil.example\",\"x\")"},
		{EventName: "+1+2"},
		{EventName: "-2+3"},
		{EventName: "@SUM(A1:A2)"},
		{EventName: "\tTab"},
		{EventName: "\rCR"},
		{EventName: "=1,2"},
		{EventName: "a=b-c"},
	}
	got := write(t, rows)
	want := "event_name,total_count,unique_visitors,conversion_rate\r\n" +
		"plain,1,1,12.5\r\n" +
		"\"a,b\",2,0,0\r\n" +
		"\"say \"\"hi\"\"\",0,0,0\r\n" +
		"\"line one\nline two\",0,0,0\r\n" +
		"\"crlf\r\nend\",0,0,0\r\n" +
		"Café ☕ 日本語 — ünïcode,0,0,0\r\n" +
		" leading space,0,0,0\r\n" +
		"\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\",0,0,0\r\n" +
		"'+1+2,0,0,0\r\n" +
		"'-2+3,0,0,0\r\n" +
		"'@SUM(A1:A2),0,0,0\r\n" +
		"'\tTab,0,0,0\r\n" +
		"\"'\rCR\",0,0,0\r\n" +
		"\"'=1,2\",0,0,0\r\n" +
		"a=b-c,0,0,0\r\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}

	// a standard reader gets every value back
	records, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(rows)+1 {
		t.Fatalf("%d records, want %d", len(records), len(rows)+1)
	}
	for i, row := range rows {
		want := Neutralise(row.EventName)
		want = strings.ReplaceAll(want, "\r\n", "\n") // encoding/csv reads a quoted CRLF as LF
		if records[i+1][0] != want {
			t.Errorf("row %d reads back as %q, want %q", i, records[i+1][0], want)
		}
	}
}

// Numbers are never disarmed: a negative change is a number.
func TestWriteCSVNumbersAndNulls(t *testing.T) {
	down, up := -12.5, 3.0
	rows := []api.Conversion{
		{GoalID: "g1", GoalName: "-signup", GoalType: "custom_event", TotalConversions: 3, UniqueVisitors: 2,
			ConversionRate: 42.9, VisitorConversionRate: 28.6, PreviousPeriodRate: 1e-7, ChangePercent: &down},
		{GoalID: "g2", GoalName: "Buy", GoalType: "pageview", ChangePercent: &up},
		{GoalID: "g3", GoalName: "New", GoalType: "pageview"},
	}
	want := "goal_id,goal_name,goal_type,total_conversions,unique_visitors,conversion_rate,visitor_conversion_rate," +
		"previous_period_rate,change_percent\r\n" +
		"g1,'-signup,custom_event,3,2,42.9,28.6,1e-7,-12.5\r\n" +
		"g2,Buy,pageview,0,0,0,0,0,3\r\n" +
		"g3,New,pageview,0,0,0,0,0,\r\n"
	if diff := cmp.Diff(want, write(t, rows)); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}

// Objects inside items become dotted columns, embedded structs add their
// fields in place, values that write themselves (times, numbers kept as
// text) are one cell, and json:"-" fields are left out.
func TestWriteCSVNestedObjects(t *testing.T) {
	type inner struct {
		Crawler int64 `json:"crawler"`
		Name    string
	}
	type Day struct {
		Date string `json:"date"`
		Net  int64  `json:"net"`
	}
	type item struct {
		Day
		When    time.Time  `json:"when"`
		Amount  api.Number `json:"amount"`
		Bots    inner      `json:"bots"`
		Maybe   *inner     `json:"maybe,omitempty"`
		Tags    []string   `json:"tags"`
		Secret  string     `json:"-"`
		Any     any        `json:"any"`
		private int
	}
	when := time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC)
	rows := []item{
		{Day: Day{Date: "2026-05-01", Net: 4999}, When: when, Amount: "49.99",
			Bots: inner{Crawler: 2, Name: "@bot"}, Maybe: &inner{Crawler: 1}, Tags: []string{"a", "b"}, Secret: "s", Any: "x", private: 1},
		{Day: Day{Date: "2026-05-02", Net: -100}},
	}
	want := "date,net,when,amount,bots.crawler,bots.Name,maybe.crawler,maybe.Name,tags,any\r\n" +
		"2026-05-01,4999,2026-05-01T12:30:00Z,49.99,2,'@bot,1,,\"[\"\"a\"\",\"\"b\"\"]\",x\r\n" +
		"2026-05-02,-100,0001-01-01T00:00:00Z,0,0,,,,,\r\n"
	if diff := cmp.Diff(want, write(t, rows)); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}

// An empty list is its header alone; a report's rows are its JSON list.
func TestWriteCSVReports(t *testing.T) {
	if got := write(t, []api.Page{}); got != "pathname,pageviews,visitors,bounce_rate,avg_time_on_page,scroll_depth\r\n" {
		t.Errorf("no pages: %q", got)
	}
	var ov api.OverviewResponse
	ov.Data.Timeseries = []api.TimeseriesPoint{{Date: "2026-05-01", Visitors: 3, Visits: 4, Pageviews: 5, ViewsPerVisit: 1.25,
		BounceRate: 25, VisitDuration: 30.5}}
	if got := write(t, ov.CSVRows()); got != "date,visitors,visits,pageviews,views_per_visit,bounce_rate,visit_duration\r\n"+
		"2026-05-01,3,4,5,1.25,25,30.5\r\n" {
		t.Errorf("overview: %q", got)
	}
	// revenue: the breakdown when one was asked for, else the days; its
	// fields as in JSON, then the currency
	rev := api.RevenueResponse{Data: api.RevenueReport{Currency: "EUR",
		Breakdown:  []api.RevenueRow{{Value: "Google", RevenueTotals: api.RevenueTotals{Revenue: 100, Net: 100, Payments: 1, PayingVisitors: 1}}},
		Timeseries: []api.RevenuePoint{{Date: "2026-05-01", Revenue: 100, Net: 100}}}}
	for _, breakdown := range []string{"", "source"} {
		rev.Meta.Breakdown = breakdown
		var item any = rev.Data.Timeseries[0]
		first := "date,"
		if breakdown != "" {
			item, first = rev.Data.Breakdown[0], "value,"
		}
		header, values := jsonFields(t, item)
		want := strings.Join(append(header, "currency"), ",") + "\r\n" + strings.Join(append(values, "EUR"), ",") + "\r\n"
		if got := write(t, rev.CSVRows()); got != want || !strings.HasPrefix(got, first) {
			t.Errorf("revenue by %q: %q, want %q", breakdown, got, want)
		}
	}
	var rt api.RealtimeResponse
	if got := write(t, rt.CSVRows()); got != "pathname,visitors\r\n" {
		t.Errorf("realtime: %q", got)
	}
	for _, bad := range []any{api.Page{}, []string{"a"}, nil} {
		if err := WriteCSV(&bytes.Buffer{}, bad); err == nil {
			t.Errorf("WriteCSV(%T) wrote rows", bad)
		}
	}
}

func TestFileNames(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	r := stats.Request{SiteID: "abc123", DateFrom: day("2026-05-01"), DateTo: day("2026-05-07")}
	by := func(f func(*stats.Request)) stats.Request { c := r; f(&c); return c }
	for _, tc := range []struct {
		report string
		r      stats.Request
		want   string
	}{
		{"pages", r, "pages-abc123-2026-05-01-2026-05-07.csv"},
		{"campaigns", by(func(c *stats.Request) { c.UTMBy = stats.DefaultUTMBy }), "campaigns-abc123-2026-05-01-2026-05-07.csv"},
		{"campaigns", by(func(c *stats.Request) { c.UTMBy = "utm_source" }), "campaigns-utm_source-abc123-2026-05-01-2026-05-07.csv"},
		{"revenue", by(func(c *stats.Request) { c.Attribution = stats.LastNonDirect }), "revenue-abc123-2026-05-01-2026-05-07.csv"},
		{"revenue", by(func(c *stats.Request) { c.Breakdown, c.Attribution = "country", stats.FirstTouch }),
			"revenue-country-first_touch-abc123-2026-05-01-2026-05-07.csv"},
		{"revenue", by(func(c *stats.Request) { c.Breakdown, c.Attribution = "source", stats.LastTouch }),
			"revenue-source-last_touch-abc123-2026-05-01-2026-05-07.csv"},
		{"realtime", stats.Request{SiteID: "abc123"}, "realtime-abc123.csv"},
		{"pages", by(func(c *stats.Request) { c.SiteID = model.SiteID(`a"b/c\d é`) }), "pages-a_b_c_d__-2026-05-01-2026-05-07.csv"},
	} {
		if got := FileName(tc.report, tc.r); got != tc.want {
			t.Errorf("FileName(%s, %+v) = %q, want %q", tc.report, tc.r, got, tc.want)
		}
	}
	if got := ZipName(r); got != "reports-abc123-2026-05-01-2026-05-07.zip" {
		t.Errorf("ZipName = %q", got)
	}
	if got := Attachment(`x".csv`); got != `attachment; filename="x_.csv"` {
		t.Errorf("Attachment = %q", got)
	}
}

// A download holds every report of the range once, with regions and cities
// only when the filters name a country and a region, and versions only when
// they name a browser and a system.
func TestDownloadReports(t *testing.T) {
	names := func(r stats.Request) []string {
		var out []string
		for _, rep := range Download(r) {
			out = append(out, rep.Name)
		}
		return out
	}
	r := stats.Request{SiteID: "s", Compare: true, Limit: 10, Page: 3}
	want := []string{"overview", "pages", "entry-pages", "exit-pages", "hostnames", "journeys", "sources", "channels",
		"campaigns", "campaigns-utm_source", "campaigns-utm_medium", "campaigns-utm_content",
		"devices", "browsers", "operating-systems", "countries", "events", "conversions", "retention-day",
		"revenue", "revenue-source", "revenue-channel", "revenue-page", "revenue-campaign", "revenue-country", "revenue-device"}
	if diff := cmp.Diff(want, names(r)); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	for _, rep := range Download(r) {
		if rep.Request.Compare || rep.Request.Limit != stats.MaxLimit || rep.Request.Page != 1 {
			t.Errorf("%s is read with %+v: want the whole report, no comparison", rep.Name, rep.Request)
		}
	}
	r.Filters = []stats.Filter{stats.Eq(stats.Country, "GB"), stats.Eq(stats.Region, "GB-ENG")}
	got := names(r)
	if !slices.Contains(got, "regions") || !slices.Contains(got, "cities") || len(got) != len(want)+2 {
		t.Errorf("with a country and a region: %v", got)
	}
	r.Filters = []stats.Filter{stats.Eq(stats.Browser, "Chrome"), stats.Eq(stats.OS, "Windows")}
	got = names(r)
	if !slices.Contains(got, "browser-versions") || !slices.Contains(got, "os-versions") || len(got) != len(want)+2 {
		t.Errorf("with a browser and a system: %v", got)
	}
	// the dashboard's attribution model reaches the revenue files, and only them
	r = stats.Request{SiteID: "s", Attribution: stats.FirstTouch}
	for _, rep := range Download(r) {
		isRevenue := strings.HasPrefix(rep.Name, "revenue")
		if isRevenue && (rep.Request.Attribution != stats.FirstTouch || !strings.HasSuffix(rep.Name, "-first_touch")) ||
			!isRevenue && rep.Request.Attribution != "" {
			t.Errorf("%s is read with attribution %q", rep.Name, rep.Request.Attribution)
		}
	}
}

// jsonFields is a flat object's keys and values as JSON writes them.
func jsonFields(t *testing.T, v any) (keys, values []string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, _ := dec.Token()
		var val any
		if err := dec.Decode(&val); err != nil {
			t.Fatal(err)
		}
		keys, values = append(keys, k.(string)), append(values, fmt.Sprint(val))
	}
	return keys, values
}
