package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// csvCase is a report asked for as CSV: the API's report, its parameters
// beyond the site and the range, the list of the JSON answer the CSV
// holds, and the file name's report part.
type csvCase struct {
	report string // the last segment of the path; conversions is the goals report
	query  url.Values
	list   string // dotted path of the list in the JSON answer
	file   string // the report part of the file name
	// currency: the rows end with data.currency (revenue)
	currency bool
}

func reportPath(report string) string {
	if report == "conversions" {
		return "/api/v1/goals/conversions"
	}
	return "/api/v1/stats/" + report
}

// apiGet sends GET path?q with the harness's API key and an optional Accept.
func apiGet(t *testing.T, h *harness, path string, q url.Values, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
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

func with(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	for i := 0; i < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// Every report's CSV is its JSON list, row for row and field for field, on
// the scenario of the stats tests; format=csv, Accept: text/csv and the Go
// client get the same bytes, named <report>-<site>-<from>-<to>.csv.
func TestCSVReportsEqualJSON(t *testing.T) {
	h, c, site := scenarioSite(t)
	ctx := context.Background()
	for _, g := range []api.GoalRequest{
		{SiteID: site, GoalName: "Signed up", GoalType: "custom_event", EventName: "signup"},
		{SiteID: site, GoalName: "=Pricing, seen", GoalType: "pageview", PagePath: "/pricing"},
		{SiteID: site, GoalName: "Blog", GoalType: "pageview", PagePath: "/blog/**"},
	} {
		if _, err := c.CreateGoal(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	// alice (Google) pays and gets part back; dave (the spring campaign) pays
	for _, p := range []api.PaymentRequest{
		{SiteID: site, Amount: "4999", Currency: "USD", VisitorID: "alice", Timestamp: "2026-05-02T10:05:00Z", TransactionID: "a-1"},
		{SiteID: site, Amount: "-1000", Currency: "USD", VisitorID: "alice", Timestamp: "2026-05-03T10:05:00Z", TransactionID: "a-1"},
		{SiteID: site, Amount: "1999", Currency: "USD", VisitorID: "dave", Timestamp: "2026-05-04T08:01:00Z", TransactionID: "d-1"},
	} {
		if _, err := c.Payment(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "UTC"}
	waitRevenue(t, h, week, 4999+1999)
	// only gina (23:30) is on the site in the last 5 minutes
	h.clock.Set(time.Date(2026, 5, 7, 23, 33, 0, 0, time.UTC))

	base := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}, "timezone": {"UTC"}}
	cases := []csvCase{
		{report: "overview", query: with(base, "compare", "true"), list: "data.timeseries"},
		{report: "pages", query: base, list: "data.pages"},
		{report: "pages", query: with(base, "limit", "2", "page", "2"), list: "data.pages"},
		{report: "hostnames", query: base, list: "data.hostnames"},
		{report: "sources", query: base, list: "data.sources"},
		{report: "channels", query: base, list: "data.channels"},
		{report: "campaigns", query: base, list: "data.campaigns"},
		{report: "campaigns", query: with(base, "by", "utm_source"), list: "data.campaigns", file: "campaigns-utm_source"},
		{report: "campaigns", query: with(base, "by", "utm_medium"), list: "data.campaigns", file: "campaigns-utm_medium"},
		{report: "entry-pages", query: base, list: "data.entry_pages"},
		{report: "exit-pages", query: base, list: "data.exit_pages"},
		{report: "devices", query: base, list: "data.devices"},
		{report: "browsers", query: base, list: "data.browsers"},
		{report: "browsers", query: with(base, "device", "Mobile"), list: "data.browsers"},
		{report: "operating-systems", query: base, list: "data.operating_systems"},
		{report: "countries", query: base, list: "data.countries"},
		{report: "regions", query: with(base, "country", "GB"), list: "data.regions"},
		{report: "cities", query: with(base, "region", "GB-ENG"), list: "data.cities"},
		{report: "events", query: base, list: "data.events"},
		{report: "realtime", query: url.Values{"site_id": {site}}, list: "data.current_pages"},
		{report: "conversions", query: base, list: "data"},
		{report: "revenue", query: base, list: "data.timeseries", currency: true},
		{report: "revenue", query: with(base, "breakdown", "source"), list: "data.breakdown", file: "revenue-source", currency: true},
		{report: "revenue", query: with(base, "breakdown", "channel"), list: "data.breakdown", file: "revenue-channel", currency: true},
		{report: "revenue", query: with(base, "breakdown", "campaign", "model", "first_touch"), list: "data.breakdown",
			file: "revenue-campaign-first_touch", currency: true},
	}
	for _, tc := range cases {
		name := tc.report
		if q := with(tc.query); true {
			for _, common := range []string{"site_id", "date_from", "date_to", "timezone"} {
				q.Del(common)
			}
			if len(q) > 0 {
				name += "?" + q.Encode()
			}
		}
		t.Run(name, func(t *testing.T) {
			res, jsonBody := apiGet(t, h, reportPath(tc.report), tc.query, "")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("JSON: %d %s", res.StatusCode, jsonBody)
			}
			res, csvBody := apiGet(t, h, reportPath(tc.report), with(tc.query, "format", "csv"), "")
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
				t.Fatalf("format=csv: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), csvBody)
			}
			file := tc.file
			if file == "" {
				file = tc.report
			}
			wantName := file + "-" + site + "-2026-05-01-2026-05-07.csv"
			if tc.report == "realtime" {
				wantName = "realtime-" + site + ".csv"
			}
			if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="`+wantName+`"` {
				t.Errorf("Content-Disposition %q, want the file %s", cd, wantName)
			}
			rows := compareCSV(t, jsonBody, csvBody, tc.list, tc.currency)
			if rows == 0 && tc.report != "realtime" {
				t.Errorf("the scenario has no rows for %s: the comparison proves nothing", name)
			}

			res, accepted := apiGet(t, h, reportPath(tc.report), tc.query, "text/csv")
			// Vary: Accept-Encoding (the compression's), then Accept
			if vary := strings.Join(res.Header.Values("Vary"), ", "); res.StatusCode != http.StatusOK || !bytes.Equal(accepted, csvBody) ||
				vary != "Accept-Encoding, Accept" {
				t.Errorf("Accept: text/csv: %d, Vary %q, same bytes as format=csv: %v", res.StatusCode, vary, bytes.Equal(accepted, csvBody))
			}
			var viaClient bytes.Buffer
			fileName, err := c.CSV(ctx, tc.report, paramsOf(tc.query), &viaClient)
			if err != nil || fileName != wantName || !bytes.Equal(viaClient.Bytes(), csvBody) {
				t.Errorf("client.CSV: %q, %v; same bytes: %v", fileName, err, bytes.Equal(viaClient.Bytes(), csvBody))
			}
		})
	}
	// the realtime rows were there (gina)
	_, body := apiGet(t, h, reportPath("realtime"), url.Values{"site_id": {site}, "format": {"csv"}}, "")
	if string(body) != "pathname,visitors\r\n/landing,1\r\n" {
		t.Errorf("realtime CSV %q", body)
	}
	// a goal's formula-like, comma-holding name is quoted and disarmed
	_, body = apiGet(t, h, reportPath("conversions"), with(base, "format", "csv"), "")
	if !strings.Contains(string(body), `,"'=Pricing, seen",pageview,`) {
		t.Errorf("conversions CSV does not quote and disarm the goal name:\n%s", body)
	}

	t.Run("the dashboard's download", func(t *testing.T) {
		w := newWebUser(t, h)
		w.login(h.email)
		view := url.Values{"range": {"custom"}, "from": {"2026-05-01"}, "to": {"2026-05-07"}}
		all := []string{"overview", "pages", "entry-pages", "exit-pages", "hostnames", "journeys", "sources", "channels", "campaigns",
			"campaigns-utm_source", "campaigns-utm_medium", "campaigns-utm_content", "devices", "browsers", "operating-systems",
			"countries", "events", "conversions", "retention-day", "revenue", "revenue-source", "revenue-channel", "revenue-page",
			"revenue-campaign", "revenue-country", "revenue-device"}
		checkDownload(t, h, w, site, view, all)

		// drilled down to a country: its regions too
		gb := with(view, "country", "GB")
		withRegions := slices.Insert(slices.Clone(all), slices.Index(all, "countries")+1, "regions")
		checkDownload(t, h, w, site, gb, withRegions)

		// and to a region: its cities, and no revenue, which cannot be
		// filtered by region (a payment knows the country of its visit only)
		eng := with(gb, "region", "GB-ENG")
		withCities := slices.Insert(slices.Clone(withRegions), slices.Index(withRegions, "regions")+1, "cities")
		checkDownload(t, h, w, site, eng, slices.DeleteFunc(withCities, func(n string) bool { return strings.HasPrefix(n, "revenue") }))

		// by a prop (no visit of this week sent one): every report but
		// revenue, which knows no event's props, each the API's
		plan := with(view, "props[plan]", "pro")
		checkDownload(t, h, w, site, plan, slices.DeleteFunc(slices.Clone(all), func(n string) bool { return strings.HasPrefix(n, "revenue") }))
	})
}

// paramsOf turns a test's query into the client's parameters.
func paramsOf(q url.Values) client.StatsParams {
	limit, _ := strconv.Atoi(q.Get("limit"))
	page, _ := strconv.Atoi(q.Get("page"))
	return client.StatsParams{SiteID: q.Get("site_id"), DateFrom: q.Get("date_from"), DateTo: q.Get("date_to"),
		Timezone: q.Get("timezone"), Compare: q.Get("compare") == "true", Limit: limit, Page: page, Device: q.Get("device"),
		Country: q.Get("country"), Region: q.Get("region"), By: q.Get("by"), Breakdown: q.Get("breakdown"), Model: q.Get("model")}
}

// compareCSV checks that the CSV is the JSON answer's list: a header of
// the items' fields in their order, then each item's values as JSON writes
// them (null empty, text that looks like a formula behind a quote). It
// returns the number of rows.
func compareCSV(t *testing.T, jsonBody, csvBody []byte, list string, currency bool) int {
	t.Helper()
	records, err := csv.NewReader(bytes.NewReader(csvBody)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, csvBody)
	}
	if !bytes.HasSuffix(csvBody, []byte("\r\n")) || bytes.Count(csvBody, []byte("\r\n")) != len(records) {
		t.Errorf("records do not end in CRLF:\n%q", csvBody)
	}
	raw := json.RawMessage(jsonBody)
	for _, key := range strings.Split(list, ".") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("%s: %v", list, err)
		}
		raw = obj[key]
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("%s is not a list: %v", list, err)
	}
	var cur string
	if currency {
		var data struct {
			Data struct {
				Currency string `json:"currency"`
			} `json:"data"`
		}
		if err := json.Unmarshal(jsonBody, &data); err != nil || data.Data.Currency == "" {
			t.Fatalf("no data.currency: %v", err)
		}
		cur = data.Data.Currency
	}
	if len(records) != len(items)+1 {
		t.Fatalf("%d CSV rows, %d items in %s", len(records)-1, len(items), list)
	}
	for i, item := range items {
		keys, values := orderedFields(t, item)
		if currency {
			keys, values = append(keys, "currency"), append(values, cur)
		}
		if i == 0 {
			if diff := cmp.Diff(keys, records[0]); diff != "" {
				t.Errorf("header is not the fields of %s (-json +csv):\n%s", list, diff)
			}
		}
		want := make([]string, len(values))
		for j, v := range values {
			want[j] = jsonCell(t, v)
		}
		if diff := cmp.Diff(want, records[i+1]); diff != "" {
			t.Errorf("row %d (-json +csv):\n%s", i+1, diff)
		}
	}
	return len(items)
}

// orderedFields reads a JSON object's keys in order, and their values
// (numbers as json.Number).
func orderedFields(t *testing.T, raw json.RawMessage) ([]string, []any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	var values []any
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys, values = append(keys, tok.(string)), append(values, v)
	}
	return keys, values
}

// jsonCell is how a JSON value reads in a CSV cell.
func jsonCell(t *testing.T, v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case string:
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			return "'" + v
		}
		return v
	}
	t.Fatalf("a nested value in a list item: %v", v)
	return ""
}

// webGet sends a dashboard GET with the user's cookies.
func webGet(t *testing.T, w *webUser, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, w.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range w.cookies {
		req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Do(req)
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

// checkDownload downloads the dashboard's zip of a view and checks that it
// holds the named files, each the API's CSV of its report with the view's
// range and filters (the site's time zone, the pages report's 1,000 first).
func checkDownload(t *testing.T, h *harness, w *webUser, site string, view url.Values, want []string) {
	t.Helper()
	res, body := webGet(t, w, "/sites/"+site+"/download?"+view.Encode())
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("download of %s: %d %s\n%.300s", view.Encode(), res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	wantZip := `attachment; filename="reports-` + site + `-` + view.Get("from") + `-` + view.Get("to") + `.zip"`
	if cd := res.Header.Get("Content-Disposition"); cd != wantZip {
		t.Errorf("Content-Disposition %q, want %q", cd, wantZip)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	wantFiles := make([]string, len(want))
	for i, n := range want {
		wantFiles[i] = n + ".csv"
	}
	if diff := cmp.Diff(wantFiles, names); diff != "" {
		t.Errorf("files of the download of %s (-want +got):\n%s", view.Encode(), diff)
	}
	q := url.Values{"site_id": {site}, "date_from": {view.Get("from")}, "date_to": {view.Get("to")}, "format": {"csv"}}
	for _, p := range []string{"source", "pathname", "country", "region", "city", "device", "browser", "os",
		"utm_source", "utm_medium", "utm_campaign", "utm_content"} {
		if v := view.Get(p); v != "" {
			q.Set(p, v)
		}
	}
	for p, v := range view {
		if strings.HasPrefix(p, "props[") {
			q[p] = v
		}
	}
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".csv")
		report, aq := name, with(q)
		if r, variant, ok := strings.Cut(name, "-"); ok && r == "campaigns" {
			report = r
			aq.Set("by", variant)
		} else if ok && r == "revenue" {
			report = r
			aq.Set("breakdown", variant)
		} else if ok && r == "retention" {
			report = r
			aq.Set("interval", variant)
		}
		if report == "pages" || report == "hostnames" || report == "journeys" {
			aq.Set("limit", "1000")
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		res, fromAPI := apiGet(t, h, reportPath(report), aq, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("API %s: %d %s", report, res.StatusCode, fromAPI)
		}
		if !bytes.Equal(got, fromAPI) {
			t.Errorf("%s of the download differs from the API's CSV:\n%s\nAPI:\n%s", f.Name, got, fromAPI)
		}
		if bytes.Count(got, []byte("\r\n")) < 1 {
			t.Errorf("%s has no header", f.Name)
		}
	}
}

// Quoting (commas, quotes, non-ASCII) and formulas, with values sent as
// events and campaigns and read back from the CSV. A line break sent is
// stored as a space (internal/ingest/text.go); the CSV writer's quoting of
// line breaks is internal/export's to test.
func TestCSVQuotingAndFormulas(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC))
	names := []string{"a,b", `say "hi"`, "line one\nline two", "Café ☕ 日本語", "=HYPERLINK(\"http://evil.example\",\"x\")",
		"+1+2", "-2+3", "@SUM(A1:A2)", "=1,2", "plain"}
	for i, name := range names {
		pv := api.PageviewRequest{SiteID: site, URL: "https://example.com/?utm_campaign=" + url.QueryEscape(name),
			UserAgent: fixtureUAs[0].ua, VisitorID: "v" + strconv.Itoa(i)}
		if _, err := c.Pageview(ctx, pv); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: pv, EventName: name}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(int64(2*len(names)), "SELECT count() FROM events WHERE site_id = ?", site)
	base := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}, "format": {"csv"}}

	disarmed := func(s string) string {
		if strings.ContainsAny(s[:1], "=+-@") {
			return "'" + s
		}
		return s
	}
	for _, report := range []string{"events", "campaigns"} {
		res, body := apiGet(t, h, reportPath(report), base, "")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", report, res.StatusCode, body)
		}
		records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v\n%s", report, err, body)
		}
		var got []string
		for _, r := range records[1:] {
			got = append(got, r[0])
		}
		var want []string
		for _, n := range names {
			want = append(want, disarmed(strings.ReplaceAll(n, "\n", " ")))
		}
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the first column read back (-want +got):\n%s", report, diff)
		}
		// RFC 4180 on the wire: quoted where needed, quotes doubled, UTF-8 as is
		for _, raw := range []string{"\"a,b\",", "\"say \"\"hi\"\"\",", "\r\nline one line two,", "\r\nCafé ☕ 日本語,",
			"\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"x\"\")\",", "\r\n'+1+2,", "\r\n'-2+3,", "\r\n'@SUM(A1:A2),", "\"'=1,2\",", "\r\nplain,"} {
			if !strings.Contains(string(body), raw) {
				t.Errorf("%s: %q is not in the CSV:\n%s", report, raw, body)
			}
		}
	}
}

// Errors stay JSON in the error envelope, with the statuses of JSON requests.
func TestCSVErrorsAreJSON(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}}
	for _, tc := range []struct {
		path   string
		query  url.Values
		accept string
		status int
		code   string
		field  string
	}{
		{"/api/v1/stats/pages", with(q, "format", "xml"), "", 400, "invalid_request", "format"},
		{"/api/v1/stats/realtime", url.Values{"site_id": {site}, "format": {"tsv"}}, "", 400, "invalid_request", "format"},
		{"/api/v1/goals/conversions", with(q, "format", ""), "", 400, "invalid_request", "format"},
		{"/api/v1/stats/pages", with(q, "format", "csv", "limit", "0"), "", 400, "invalid_request", "limit"},
		{"/api/v1/stats/overview", with(q, "date_to", "2026-04-01"), "text/csv", 400, "invalid_date_range", "date_from"},
		{"/api/v1/stats/sources", with(q, "site_id", "nosuchsite", "format", "csv"), "", 404, "site_not_found", "site_id"},
		{"/api/v1/stats/revenue", with(q, "browser", "Chrome"), "text/csv", 400, "invalid_request", "browser"},
	} {
		res, body := apiGet(t, h, tc.path, tc.query, tc.accept)
		var env api.Error
		err := json.Unmarshal(body, &env)
		if res.StatusCode != tc.status || res.Header.Get("Content-Type") != "application/json" || err != nil ||
			env.Error.Code != tc.code || env.Error.Field != tc.field || res.Header.Get("Content-Disposition") != "" {
			t.Errorf("%s?%s (Accept %q): %d %s %s; want %d %s on %q as JSON", tc.path, tc.query.Encode(), tc.accept,
				res.StatusCode, res.Header.Get("Content-Type"), body, tc.status, tc.code, tc.field)
		}
	}
	// the client reports them as errors too
	if _, err := h.client(h.key).CSV(context.Background(), "pages", client.StatsParams{SiteID: site}, io.Discard); !isAPIError(err, 400, "invalid_request") {
		t.Errorf("client.CSV without dates: %v, want 400", err)
	}
}

// The download follows the dashboard's rules: members (viewers too) get
// it, others do not learn the site exists, a visitor without a login goes
// to the login page, and its reports count against the stats allowance.
func TestCSVDownloadAccess(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.StatsPerHour = 30 }))
	ctx := context.Background()
	for _, email := range []string{"viewer@example.com", "stranger@example.com"} {
		if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "X", Plan: model.PlanFree}); err != nil {
			t.Fatal(err)
		}
	}
	download := "/sites/" + string(h.siteID) + "/download?range=7d"
	owner := newWebUser(t, h)
	owner.login(h.email)
	owner.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/settings", nil, http.StatusOK)
	owner.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/members",
		url.Values{"email": {"viewer@example.com"}, "role": {"viewer"}, "csrf": {owner.csrf}}, http.StatusSeeOther)

	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if res, body := webGet(t, viewer, download); res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/zip" {
		t.Errorf("a viewer's download: %d %s %.200s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	stranger := newWebUser(t, h)
	stranger.login("stranger@example.com")
	if res, _ := webGet(t, stranger, download); res.StatusCode != http.StatusNotFound {
		t.Errorf("a stranger's download: %d, want 404", res.StatusCode)
	}
	if res, _ := webGet(t, newWebUser(t, h), download); res.StatusCode != http.StatusSeeOther ||
		!strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Errorf("a download without a login: %d to %q, want the login page", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := webGet(t, owner, "/sites/"+string(h.siteID)+"/download?range=forever"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a download of an unknown range: %d, want 400", res.StatusCode)
	}

	// 21 reports of 30: the second download is refused, a card still fits
	if res, _ := webGet(t, owner, download); res.StatusCode != http.StatusOK {
		t.Fatalf("the owner's first download: %d", res.StatusCode)
	}
	if res, body := webGet(t, owner, download); res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "Too many reports") {
		t.Errorf("a second download within the allowance of 30 reports: %d, want 429", res.StatusCode)
	}
	owner.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/cards/devices", nil, http.StatusOK)
}
