package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

var t0 = time.Date(2026, 5, 1, 4, 0, 0, 0, time.UTC)

func hour(i int, n int64) HourCount {
	return HourCount{Start: t0.Add(time.Duration(i) * time.Hour), Events: n}
}

func TestPlan(t *testing.T) {
	from, to := t0.Add(-30*time.Minute), t0.Add(48*time.Hour) // a zone half an hour off UTC
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	for _, tc := range []struct {
		name  string
		hours []HourCount
		want  []part
	}{
		{"no events: one part, the whole range", nil, []part{{from, to}}},
		{"under the target", []HourCount{hour(-1, 3), hour(0, 40), hour(5, 50)}, []part{{from, to}}},
		{"cut before the hour that passes it", []HourCount{hour(-1, 30), hour(0, 40), hour(5, 50), hour(9, 10)},
			[]part{{from, at(5)}, {at(5), to}}},
		{"an hour over the target alone", []HourCount{hour(1, 500), hour(2, 1), hour(3, 99), hour(4, 1)},
			[]part{{from, at(2)}, {at(2), at(4)}, {at(4), to}}},
		{"the first hour starts before the range", []HourCount{hour(-1, 150), hour(1, 10)},
			[]part{{from, at(1)}, {at(1), to}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := plan(from, to, tc.hours, 100)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(part{})); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeStore holds rows in order and streams them by part, as the store
// does; fail, when set, is returned after failAfter rows.
type fakeStore struct {
	rows      []model.EventRow
	hoursErr  error
	fail      error
	failAfter int
	parts     []part
	streamed  int
}

func (f *fakeStore) EventHours(_ context.Context, _ model.SiteID, from, to time.Time) ([]HourCount, error) {
	var out []HourCount
	for _, r := range f.rows {
		h := r.Timestamp.Truncate(time.Hour)
		if n := len(out); n > 0 && out[n-1].Start.Equal(h) {
			out[n-1].Events++
		} else {
			out = append(out, HourCount{Start: h, Events: 1})
		}
	}
	return out, f.hoursErr
}

func (f *fakeStore) StreamEvents(ctx context.Context, _ model.SiteID, from, to time.Time, fn func(*model.EventRow) error) error {
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("a part's query without a deadline")
	}
	f.parts = append(f.parts, part{from, to})
	var row model.EventRow
	for _, r := range f.rows {
		if r.Timestamp.Before(from) || !r.Timestamp.Before(to) {
			continue
		}
		if f.fail != nil && f.streamed == f.failAfter {
			return f.fail
		}
		row = r // one row, filled anew
		f.streamed++
		if err := fn(&row); err != nil {
			return err
		}
	}
	return nil
}

// recorder is an encoder that keeps what it got.
type recorder struct {
	names   []string
	flushes int
}

func (r *recorder) Encode(e *api.ExportedEvent) error {
	r.names = append(r.names, e.EventID+" "+e.Timestamp.Format(time.TimeOnly))
	return nil
}
func (r *recorder) Flush() error { r.flushes++; return nil }

func rowsEvery(n int, step time.Duration) []model.EventRow {
	out := make([]model.EventRow, n)
	for i := range out {
		out[i] = model.EventRow{Timestamp: t0.Add(time.Duration(i) * step), EventID: strings.Repeat("x", i%3+1), Name: "pageview"}
	}
	return out
}

func TestWriteToReadsEveryPartInOrder(t *testing.T) {
	store := &fakeStore{rows: rowsEvery(250_000, time.Second)} // 70 hours
	rg := stats.Range{Site: model.Site{ID: "s1"}, From: t0, To: t0.Add(72 * time.Hour)}
	var progress []Progress
	rec := &recorder{}
	n, err := NewEvents(nil, store).Of(rg).WriteTo(context.Background(), rec, func(p Progress) { progress = append(progress, p) })
	if err != nil || n != 250_000 || len(rec.names) != 250_000 {
		t.Fatalf("wrote %d (%d encoded), %v", n, len(rec.names), err)
	}
	if len(store.parts) != 3 || !store.parts[0].from.Equal(rg.From) || !store.parts[2].to.Equal(rg.To) {
		t.Errorf("parts %v, want 3 covering the range", store.parts)
	}
	for i := 1; i < len(store.parts); i++ {
		if !store.parts[i].from.Equal(store.parts[i-1].to) {
			t.Errorf("parts %d and %d leave a gap or overlap: %v", i-1, i, store.parts)
		}
	}
	if rec.flushes < 1 || progress[0] != (Progress{Expected: 250_000}) || progress[len(progress)-1] != (Progress{Written: 250_000, Expected: 250_000}) {
		t.Errorf("%d flushes, progress %v … %v", rec.flushes, progress[0], progress[len(progress)-1])
	}
}

func TestWriteToStopsOnErrors(t *testing.T) {
	rg := stats.Range{Site: model.Site{ID: "s1"}, From: t0, To: t0.Add(24 * time.Hour)}
	down := errors.New("clickhouse went away")
	store := &fakeStore{rows: rowsEvery(10, time.Minute), fail: down, failAfter: 4}
	n, err := NewEvents(nil, store).Of(rg).WriteTo(context.Background(), &recorder{}, nil)
	if !errors.Is(err, down) || n != 4 {
		t.Errorf("a failing read: %d written, %v", n, err)
	}
	store = &fakeStore{rows: rowsEvery(10, time.Minute), hoursErr: down}
	rec := &recorder{}
	if _, err := NewEvents(nil, store).Of(rg).WriteTo(context.Background(), rec, nil); !errors.Is(err, down) || rec.flushes != 0 {
		t.Errorf("failing counts: %v, %d flushes (nothing may be written)", err, rec.flushes)
	}
}

// Every field of a row reaches its record, in both formats.
func TestEncoders(t *testing.T) {
	full := model.EventRow{EventID: "e1", Timestamp: time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("X", 3600)),
		Name: "-1 refund", Pathname: "/p,q", VisitorID: 1<<64 - 1, SessionID: 255,
		Attribution: model.Attribution{Hostname: "example.com", Referrer: "t.co/x", ReferrerSource: "Twitter",
			SourceType: "social", UTMSource: "us", UTMMedium: "um", UTMCampaign: `a "b"`, UTMContent: "ut", UTMTerm: "uk",
			Device: "Mobile", Browser: "Safari", BrowserVersion: "17.1", OS: "iOS", OSVersion: "17.1",
			CountryCode: "US", RegionCode: "US-WA", RegionName: "Washington", City: "Milton"},
		PropKeys: []string{"plan", "<b>"}, PropValues: []string{"pro", "a&b"}, RevenueAmount: -4999, RevenueCurrency: "EUR"}
	bare := model.EventRow{EventID: "e2", Timestamp: t0, Name: "pageview", Pathname: "/"}

	var nd bytes.Buffer
	enc, err := NewEventEncoder(NDJSON, &nd)
	if err != nil {
		t.Fatal(err)
	}
	var rec api.ExportedEvent
	for _, r := range []*model.EventRow{&full, &bare} {
		fill(&rec, r)
		if err := enc.Encode(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"event_id":"e1","timestamp":"2026-05-01T11:00:00Z","name":"-1 refund","pathname":"/p,q","hostname":"example.com",` +
		`"referrer":"t.co/x","source":"Twitter","source_type":"social","utm_source":"us","utm_medium":"um",` +
		`"utm_campaign":"a \"b\"","utm_content":"ut","utm_term":"uk","device":"Mobile","browser":"Safari",` +
		`"browser_version":"17.1","os":"iOS","os_version":"17.1","country":"US","region":"US-WA","region_name":"Washington",` +
		`"city":"Milton","props":{"<b>":"a&b","plan":"pro"},"revenue_amount":-4999,"revenue_currency":"EUR",` +
		`"session_id":"00000000000000ff","visitor_id":"ffffffffffffffff"}` + "\n" +
		`{"event_id":"e2","timestamp":"2026-05-01T04:00:00Z","name":"pageview","pathname":"/","hostname":"","referrer":"",` +
		`"source":"","source_type":"","utm_source":"","utm_medium":"","utm_campaign":"","utm_content":"","utm_term":"",` +
		`"device":"","browser":"","browser_version":"","os":"","os_version":"","country":"","region":"","region_name":"",` +
		`"city":"","props":{},"revenue_amount":null,"revenue_currency":null,"session_id":"0000000000000000",` +
		`"visitor_id":"0000000000000000"}` + "\n"
	if diff := cmp.Diff(want, nd.String()); diff != "" {
		t.Errorf("NDJSON (-want +got):\n%s", diff)
	}

	var cb bytes.Buffer
	enc, err = NewEventEncoder(CSV, &cb)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*model.EventRow{&full, &bare} {
		fill(&rec, r)
		if err := enc.Encode(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]string{
		{"event_id", "timestamp", "name", "pathname", "hostname", "referrer", "source", "source_type", "utm_source",
			"utm_medium", "utm_campaign", "utm_content", "utm_term", "device", "browser", "browser_version", "os",
			"os_version", "country", "region", "region_name", "city", "props", "revenue_amount", "revenue_currency",
			"session_id", "visitor_id"},
		{"e1", "2026-05-01T11:00:00Z", "'-1 refund", "/p,q", "example.com", "t.co/x", "Twitter", "social", "us", "um",
			`a "b"`, "ut", "uk", "Mobile", "Safari", "17.1", "iOS", "17.1", "US", "US-WA", "Washington", "Milton",
			`{"<b>":"a&b","plan":"pro"}`, "-4999", "EUR", "00000000000000ff", "ffffffffffffffff"},
		{"e2", "2026-05-01T04:00:00Z", "pageview", "/", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
			"", "", "{}", "", "", "0000000000000000", "0000000000000000"},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"ndjson", "csv"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	for _, s := range []string{"", "json", "CSV", "jsonl"} {
		if _, err := ParseFormat(s); err == nil {
			t.Errorf("ParseFormat(%q) accepted", s)
		}
	}
}
