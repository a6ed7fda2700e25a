package app_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/httpapi/openapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// exportEvent is an event of the export scenario, sent through the Events
// API at a known time with known values.
type exportEvent struct {
	name    string // the fixture's own name, for the expectations
	at      string // UTC
	visitor string
	ua      int    // index into fixtureUAs
	ip      string // "" = none
	url     string
	ref     string
	event   string // custom event name; "" = pageview
	props   map[string]any
	revenue *api.Revenue
}

// The export scenario, on a site in America/New_York (UTC-4 in May): the
// site's days May 1–2 run from May 1 04:00 to May 3 04:00 UTC.
var exportScenario = []exportEvent{
	// Apr 30 23:30 in New York: only in UTC days
	{name: "early", at: "2026-05-01 03:30:00", visitor: "ivy", ua: 0, url: "https://example.com/before"},
	// May 1 00:00 in New York, the first second of the range
	{name: "landing", at: "2026-05-01 04:00:00", visitor: "alice", ua: 0, ip: "81.2.69.10",
		url: "https://example.com/landing?utm_source=acme-mail&utm_medium=email&utm_campaign=spring%2C%20%22big%22&utm_content=hero&utm_term=web%20analytics"},
	// on the site's app subdomain, in the same visit
	{name: "signup", at: "2026-05-01 04:01:30", visitor: "alice", ua: 0, ip: "81.2.69.10", url: "https://app.example.com/signup",
		event: "Signup", props: map[string]any{"plan": `=HYPERLINK("http://x")`, "seats": 3, "trial": true},
		revenue: &api.Revenue{Amount: "49.99", Currency: "USD"}},
	{name: "blog", at: "2026-05-02 16:00:00", visitor: "bob", ua: 1, ip: "216.160.83.5", url: "https://example.com/blog/a,b",
		ref: "https://t.co/abc"},
	{name: "mention", at: "2026-05-02 16:00:10", visitor: "bob", ua: 1, ip: "216.160.83.5", url: "https://example.com/blog/a,b",
		event: "@mention", props: map[string]any{"note": "line 1\nline 2"}},
	// May 2 23:59:59 in New York, the last second of the range
	{name: "last", at: "2026-05-03 03:59:59", visitor: "carol", ua: 3, ip: "10.0.0.1", url: "https://example.com/"},
	// May 3 00:00 in New York: after it
	{name: "late", at: "2026-05-03 04:00:00", visitor: "carol", ua: 3, ip: "10.0.0.1", url: "https://example.com/late"},
}

// exportSite ingests the scenario (with a bot and another site's event in
// the range, neither of which may be exported) and returns the harness,
// the site and the event ids by fixture name.
func exportSite(t *testing.T, exportsPerHour int) (*harness, string, map[string]string) {
	t.Helper()
	cfg := testenv.Config(t)
	cfg.ExportsPerHour = exportsPerHour
	londonAndMilton(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "example.com", Timezone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.client(h.key)
	ids := map[string]string{}
	for _, ev := range exportScenario {
		at, err := time.Parse(time.DateTime, ev.at)
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		req := api.PageviewRequest{SiteID: string(site.ID), URL: ev.url, Referrer: ev.ref, IPAddress: ev.ip,
			VisitorID: ev.visitor, UserAgent: fixtureUAs[ev.ua].ua}
		var res api.EventResponse
		if ev.event != "" {
			res, err = c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: req, EventName: ev.event, Props: ev.props,
				Revenue: ev.revenue})
		} else {
			res, err = c.Pageview(ctx, req)
		}
		if err != nil {
			t.Fatalf("%s: %v", ev.name, err)
		}
		ids[ev.name] = res.EventID
	}
	h.clock.Set(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(site.ID), URL: "https://example.com/", UserAgent: googlebotUA}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com/other",
		UserAgent: fixtureUAs[0].ua, VisitorID: "alice"}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(int64(len(exportScenario)), "SELECT count() FROM events WHERE site_id = ?", string(site.ID))
	h.waitCount(1, "SELECT count() FROM bot_events WHERE site_id = ?", string(site.ID))
	h.waitCount(1, "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	return h, string(site.ID), ids
}

// wantExported are the records of the scenario's events as exported, but
// for their ids (checked against the stored rows on their own).
func wantExported() map[string]api.ExportedEvent {
	at := func(s string) time.Time {
		t, _ := time.Parse(time.DateTime, s)
		return t.UTC()
	}
	amount, currency := int64(4999), "USD"
	// alice's visit: a UTM campaign, London, Chrome on Windows; every event
	// of a visit carries the visit's source and referrer, and the host name
	// it happened on
	alice := api.ExportedEvent{Hostname: "example.com", Source: "acme-mail", SourceType: "referral",
		UTMSource: "acme-mail", UTMMedium: "email", UTMCampaign: `spring, "big"`, UTMContent: "hero", UTMTerm: "web analytics",
		Device: "Desktop", Browser: "Chrome", BrowserVersion: "121.0", OS: "Windows", OSVersion: "10",
		Country: "GB", Region: "GB-ENG", RegionName: "England", City: "London", Props: map[string]string{}}
	landing, signup := alice, alice
	landing.Timestamp, landing.Name, landing.Pathname = at("2026-05-01 04:00:00"), "pageview", "/landing"
	signup.Timestamp, signup.Name, signup.Pathname = at("2026-05-01 04:01:30"), "Signup", "/signup"
	signup.Hostname = "app.example.com"
	signup.Props = map[string]string{"plan": `=HYPERLINK("http://x")`, "seats": "3", "trial": "true"}
	signup.RevenueAmount, signup.RevenueCurrency = &amount, &currency
	// bob's: from Twitter, Milton, Safari on an iPhone
	bob := api.ExportedEvent{Hostname: "example.com", Referrer: "t.co/abc", Source: "Twitter", SourceType: "social",
		Device: "Mobile", Browser: "Safari", BrowserVersion: "17.1", OS: "iOS", OSVersion: "17.1",
		Country: "US", Region: "US-WA", RegionName: "Washington", City: "Milton", Props: map[string]string{}}
	blog, mention := bob, bob
	blog.Timestamp, blog.Name, blog.Pathname = at("2026-05-02 16:00:00"), "pageview", "/blog/a,b"
	mention.Timestamp, mention.Name, mention.Pathname = at("2026-05-02 16:00:10"), "@mention", "/blog/a,b"
	mention.Props = map[string]string{"note": "line 1 line 2"} // ingest stores no line break (internal/ingest/text.go)
	// carol's and ivy's: direct; carol's address is private (no place)
	direct := api.ExportedEvent{Hostname: "example.com", Source: "Direct / None", SourceType: "direct", Props: map[string]string{}}
	last := direct
	last.Timestamp, last.Name, last.Pathname = at("2026-05-03 03:59:59"), "pageview", "/"
	last.Device, last.Browser, last.BrowserVersion, last.OS, last.OSVersion = "Tablet", "Safari", "16.6", "iOS", "16.6"
	early := direct
	early.Timestamp, early.Name, early.Pathname = at("2026-05-01 03:30:00"), "pageview", "/before"
	early.Device, early.Browser, early.BrowserVersion, early.OS, early.OSVersion = "Desktop", "Chrome", "121.0", "Windows", "10"
	return map[string]api.ExportedEvent{"early": early, "landing": landing, "signup": signup, "blog": blog,
		"mention": mention, "last": last}
}

// storedIDs are the event, session and visitor ids of a site's stored
// events by event id, the two latter as the export writes them.
func storedIDs(t *testing.T, h *harness, site string) map[string][2]string {
	t.Helper()
	rows, err := h.ch.EventRows(context.Background(), model.SiteID(site), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]string{}
	for _, r := range rows {
		out[r.EventID] = [2]string{hex16(r.SessionID), hex16(r.VisitorID)}
	}
	return out
}

func hex16(v uint64) string {
	s := strconv.FormatUint(v, 16)
	return strings.Repeat("0", 16-len(s)) + s
}

// exportGet asks for an export, with header name-value pairs, as a client
// that handles the content encoding itself (none unless asked for).
func exportGet(t *testing.T, h *harness, key string, q url.Values, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/export/events?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// ndjsonRecords decodes an NDJSON export strictly: every line one record
// with exactly the fields of api.ExportedEvent, valid against openapi.yaml.
func ndjsonRecords(t *testing.T, body []byte) []api.ExportedEvent {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["ExportedEvent"].Value
	var out []api.ExportedEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var rec api.ExportedEvent
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("line %d: %v: %s", len(out)+1, err, sc.Bytes())
		}
		var generic any
		if err := json.Unmarshal(sc.Bytes(), &generic); err != nil {
			t.Fatal(err)
		}
		if err := schema.VisitJSON(generic); err != nil {
			t.Errorf("line %d does not match ExportedEvent in openapi.yaml: %v", len(out)+1, err)
		}
		out = append(out, rec)
	}
	if len(body) > 0 && body[len(body)-1] != '\n' {
		t.Error("the last record does not end with a line feed")
	}
	return out
}

var opaqueID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// checkRecords compares records with the scenario's events named, in order,
// field by field, and their ids with the stored rows'.
func checkRecords(t *testing.T, h *harness, site string, ids map[string]string, got []api.ExportedEvent, names ...string) {
	t.Helper()
	all, stored := wantExported(), storedIDs(t, h, site)
	var want []api.ExportedEvent
	for _, n := range names {
		w := all[n]
		w.EventID = ids[n]
		w.SessionID, w.VisitorID = stored[ids[n]][0], stored[ids[n]][1]
		want = append(want, w)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	visitors := map[string]string{}
	for i, r := range got {
		if !opaqueID.MatchString(r.SessionID) || !opaqueID.MatchString(r.VisitorID) {
			t.Errorf("record %d: ids %q, %q are not 16 hex digits", i, r.SessionID, r.VisitorID)
		}
		if i < len(names) {
			who := exportFixture(names[i]).visitor
			if other, ok := visitors[r.VisitorID]; ok && other != who {
				t.Errorf("%s and %s share the visitor id %s", who, other, r.VisitorID)
			}
			visitors[r.VisitorID] = who
		}
	}
}

func exportFixture(name string) exportEvent {
	for _, ev := range exportScenario {
		if ev.name == name {
			return ev
		}
	}
	return exportEvent{}
}

// countStored counts a site's stored events in [from, to).
func countStored(h *harness, site, from, to string) int64 {
	return h.count("SELECT count() FROM events WHERE site_id = ? AND ts >= toDateTime(?) AND ts < toDateTime(?)", site, from, to)
}

func TestExportEvents(t *testing.T) {
	h, site, ids := exportSite(t, 100)
	ctx := context.Background()
	may := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-02"}}
	var bodies [][]byte // everything exported, searched for addresses at the end

	res, plain := exportGet(t, h, h.key, may)
	bodies = append(bodies, plain)
	t.Run("NDJSON in the site's time zone", func(t *testing.T) {
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-ndjson" ||
			res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%d %v\n%s", res.StatusCode, res.Header, plain)
		}
		if got, want := res.Header.Get("Content-Disposition"), `attachment; filename="events-`+site+`-2026-05-01-2026-05-02.ndjson"`; got != want {
			t.Errorf("Content-Disposition %q, want %q", got, want)
		}
		recs := ndjsonRecords(t, plain)
		checkRecords(t, h, site, ids, recs, "landing", "signup", "blog", "mention", "last")
		// New York's May 1 00:00 to May 3 00:00 (EDT, UTC-4)
		if n := countStored(h, site, "2026-05-01 04:00:00", "2026-05-03 04:00:00"); int64(len(recs)) != n {
			t.Errorf("%d records, %d events stored in the range", len(recs), n)
		}
		if got := res.Trailer.Get("X-Export-Records"); got != strconv.Itoa(len(recs)) {
			t.Errorf("trailer X-Export-Records %q, want %d", got, len(recs))
		}
		if !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Vary %q does not name Accept-Encoding", res.Header.Values("Vary"))
		}
	})

	t.Run("UTC days with the timezone parameter", func(t *testing.T) {
		res, body := exportGet(t, h, h.key, with(may, "timezone", "UTC"))
		bodies = append(bodies, body)
		if res.StatusCode != 200 {
			t.Fatalf("%d %s", res.StatusCode, body)
		}
		checkRecords(t, h, site, ids, ndjsonRecords(t, body), "early", "landing", "signup", "blog", "mention")
	})

	t.Run("one day", func(t *testing.T) {
		res, body := exportGet(t, h, h.key, with(may, "date_from", "2026-05-02"))
		bodies = append(bodies, body)
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Disposition"), "-2026-05-02-2026-05-02.ndjson") {
			t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
		}
		checkRecords(t, h, site, ids, ndjsonRecords(t, body), "blog", "mention", "last")
	})

	t.Run("a day without events", func(t *testing.T) {
		res, body := exportGet(t, h, h.key, with(may, "date_from", "2026-06-01", "date_to", "2026-06-01"))
		if res.StatusCode != 200 || len(body) != 0 || res.Trailer.Get("X-Export-Records") != "0" {
			t.Errorf("%d %q, trailer %q: want 200, no body, 0 records", res.StatusCode, body, res.Trailer.Get("X-Export-Records"))
		}
		res, body = exportGet(t, h, h.key, with(may, "date_from", "2026-06-01", "date_to", "2026-06-01", "format", "csv"))
		if res.StatusCode != 200 || !strings.HasPrefix(string(body), "event_id,timestamp,") || strings.Count(string(body), "\r\n") != 1 {
			t.Errorf("an empty CSV export: %d %q, want its header alone", res.StatusCode, body)
		}
	})

	t.Run("CSV", func(t *testing.T) {
		res, body := exportGet(t, h, h.key, with(may, "format", "csv"))
		bodies = append(bodies, body)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			res.Header.Get("Content-Disposition") != `attachment; filename="events-`+site+`-2026-05-01-2026-05-02.csv"` {
			t.Fatalf("%d %v\n%s", res.StatusCode, res.Header, body)
		}
		// a cell with a comma and quotes is quoted, its quotes doubled
		if !strings.Contains(string(body), `,"spring, ""big""",`) {
			t.Errorf("the campaign is not quoted as RFC 4180 says:\n%s", body)
		}
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		header := []string{"event_id", "timestamp", "name", "pathname", "hostname", "referrer", "source", "source_type",
			"utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term", "device", "browser", "browser_version",
			"os", "os_version", "country", "region", "region_name", "city", "props", "revenue_amount", "revenue_currency",
			"session_id", "visitor_id"}
		if diff := cmp.Diff(header, rows[0]); diff != "" {
			t.Fatalf("header (-want +got):\n%s", diff)
		}
		// every row is its NDJSON record, as the reports' CSV writes JSON values
		recs := ndjsonRecords(t, plain)
		if len(rows)-1 != len(recs) {
			t.Fatalf("%d rows, %d NDJSON records", len(rows)-1, len(recs))
		}
		for i, rec := range recs {
			props, _ := json.Marshal(rec.Props)
			amount, currency := "", ""
			if rec.RevenueAmount != nil {
				amount, currency = strconv.FormatInt(*rec.RevenueAmount, 10), *rec.RevenueCurrency
			}
			name := rec.Name
			if strings.HasPrefix(name, "@") {
				name = "'" + name // a spreadsheet would take it for a formula
			}
			want := []string{rec.EventID, rec.Timestamp.Format(time.RFC3339), name, rec.Pathname, rec.Hostname, rec.Referrer,
				rec.Source, rec.SourceType, rec.UTMSource, rec.UTMMedium, rec.UTMCampaign, rec.UTMContent, rec.UTMTerm,
				rec.Device, rec.Browser, rec.BrowserVersion, rec.OS, rec.OSVersion, rec.Country, rec.Region, rec.RegionName,
				rec.City, string(props), amount, currency, rec.SessionID, rec.VisitorID}
			if diff := cmp.Diff(want, rows[i+1]); diff != "" {
				t.Errorf("row %d (-want +got):\n%s", i+1, diff)
			}
		}
		if rows[2][22] != `{"plan":"=HYPERLINK(\"http://x\")","seats":"3","trial":"true"}` || rows[2][23] != "4999" || rows[2][24] != "USD" {
			t.Errorf("the signup's props and revenue: %q", rows[2][22:25])
		}
		if rows[4][2] != "'@mention" || rows[4][22] != `{"note":"line 1 line 2"}` {
			t.Errorf("the mention's name and props: %q, %q", rows[4][2], rows[4][22])
		}
		// Accept: text/csv without format gets the same file
		res, again := exportGet(t, h, h.key, may, "Accept", "text/csv")
		if res.StatusCode != 200 || !bytes.Equal(again, body) {
			t.Errorf("Accept: text/csv: %d, same bytes: %v", res.StatusCode, bytes.Equal(again, body))
		}
	})

	t.Run("gzip", func(t *testing.T) {
		res, body := exportGet(t, h, h.key, may, "Accept-Encoding", "gzip, deflate")
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%d %v", res.StatusCode, res.Header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(unzipped, plain) {
			t.Errorf("gunzipped export differs from the plain one:\n%s\n%s", unzipped, plain)
		}
		res, body = exportGet(t, h, h.key, may, "Accept-Encoding", "gzip;q=0")
		if res.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, plain) {
			t.Errorf("gzip;q=0 got Content-Encoding %q", res.Header.Get("Content-Encoding"))
		}
	})

	t.Run("the Go client", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := h.client(h.key).ExportEvents(ctx, client.ExportParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-02"}, &buf)
		if err != nil || n != 5 || !bytes.Equal(buf.Bytes(), plain) {
			t.Errorf("ExportEvents: %d records, %v; same bytes as the API's: %v", n, err, bytes.Equal(buf.Bytes(), plain))
		}
		_, err = h.client(h.key).ExportEvents(ctx, client.ExportParams{SiteID: site, DateFrom: "2026-05-03", DateTo: "2026-05-01"}, &buf)
		wantError(t, err, 400, "invalid_date_range", "date_from")
	})

	t.Run("a viewer of the site", func(t *testing.T) {
		key := exportViewerKey(t, h, site)
		res, body := exportGet(t, h, key, may)
		if res.StatusCode != 200 || !bytes.Equal(body, plain) {
			t.Errorf("a viewer: %d, the owner's bytes: %v", res.StatusCode, bytes.Equal(body, plain))
		}
	})

	t.Run("another account", func(t *testing.T) {
		stranger := newMatrixAccount(t, h, "stranger@example.com")
		res, body := exportGet(t, h, stranger.keys[model.ScopeAdminFull], may)
		if res.StatusCode != 404 || errorCode(body) != "site_not_found" {
			t.Errorf("another account's site: %d %s, want 404 site_not_found", res.StatusCode, body)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		noStats := exportKey(t, h, model.ScopeEventsWrite)
		for _, tc := range []struct {
			key                string
			q                  url.Values
			status             int
			code, field, media string
		}{
			{h.key, with(may, "date_from", "2026-05-03"), 400, "invalid_date_range", "date_from", ""},
			{h.key, with(may, "date_from", "2026-02-30"), 400, "invalid_request", "date_from", ""},
			{h.key, url.Values{"site_id": {site}, "date_from": {"2026-05-01"}}, 400, "invalid_request", "date_to", ""},
			{h.key, with(may, "date_to", "2031-05-02"), 400, "invalid_date_range", "date_to", ""},
			{h.key, with(may, "timezone", "Mars/Olympus"), 400, "invalid_request", "timezone", ""},
			{h.key, with(may, "format", "json"), 400, "invalid_request", "format", ""},
			{h.key, with(may, "country", "GB"), 400, "invalid_request", "country", ""},
			{h.key, with(may, "site_id", ""), 400, "invalid_request", "site_id", ""},
			{h.key, with(may, "site_id", "nosuchsite01"), 404, "site_not_found", "site_id", ""},
			{noStats, may, 403, "forbidden", "", ""},
			{"sk_test_wrong", may, 401, "unauthorized", "", ""},
			// errors are JSON whatever the format asked for
			{h.key, with(may, "date_from", "x", "format", "csv"), 400, "invalid_request", "date_from", "text/csv"},
		} {
			res, body := exportGet(t, h, tc.key, tc.q, "Accept", tc.media)
			var e api.Error
			if json.Unmarshal(body, &e) != nil || res.StatusCode != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field ||
				!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%v: %d %s, want %d %s (field %q) as JSON", tc.q, res.StatusCode, body, tc.status, tc.code, tc.field)
			}
		}
	})

	t.Run("no IP address anywhere", func(t *testing.T) {
		all := bytes.Join(bodies, []byte("\n"))
		for _, ev := range exportScenario {
			if ev.ip != "" && bytes.Contains(all, []byte(ev.ip)) {
				t.Errorf("the export holds the address %s", ev.ip)
			}
		}
		for _, k := range []string{`"ip`, "ip_address", "user_agent", "Mozilla/"} {
			if bytes.Contains(all, []byte(k)) {
				t.Errorf("the export holds %q", k)
			}
		}
		if bytes.Contains(all, []byte("Googlebot")) || bytes.Contains(all, []byte("/other")) {
			t.Error("the export holds a bot's or another site's event")
		}
	})
}

// Exports are limited per account (its keys together), counted only once a
// request passed its checks; the limit is the account's, not the site's.
func TestExportLimit(t *testing.T) {
	h, site, _ := exportSite(t, 2)
	q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-02"}}
	second := exportKey(t, h) // another key of the same account
	for i, key := range []string{h.key, second} {
		if res, body := exportGet(t, h, key, with(q, "date_to", "nope")); res.StatusCode != 400 {
			t.Fatalf("a bad request: %d %s", res.StatusCode, body)
		}
		res, body := exportGet(t, h, key, q)
		if res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") != "2" ||
			res.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Fatalf("export %d: %d %v %s", i+1, res.StatusCode, res.Header, body)
		}
	}
	res, body := exportGet(t, h, h.key, q)
	if res.StatusCode != 429 || errorCode(body) != "rate_limit_exceeded" || res.Header.Get("Retry-After") == "" ||
		res.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the third export of the hour: %d %v %s, want 429 with Retry-After", res.StatusCode, res.Header, body)
	}
	// a viewer's account has its own allowance
	if res, body := exportGet(t, h, exportViewerKey(t, h, site), q); res.StatusCode != 200 {
		t.Errorf("another account's export: %d %s", res.StatusCode, body)
	}
}

// exportKey is another API key of h's account, with the scopes given (all
// without any).
func exportKey(t *testing.T, h *harness, scopes ...model.Scope) string {
	t.Helper()
	k, err := h.app.Accounts.CreateKey(context.Background(), accounts.NewKey{OwnerEmail: h.email,
		Name: "export " + strconv.Itoa(len(scopes)) + uniqueSuffix(), Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}

// exportViewerKey makes a new viewer of site and returns a key of theirs.
func exportViewerKey(t *testing.T, h *harness, site string) string {
	t.Helper()
	ctx := context.Background()
	email := "viewer" + uniqueSuffix() + "@example.com"
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "Viewer"}); err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, model.SiteID(site), email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: "viewer"})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}
