package model_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
)

func sampleAttribution() model.Attribution {
	return model.Attribution{Hostname: "example.com", Referrer: "news.ycombinator.com/item", ReferrerSource: "Hacker News",
		SourceType: "social", UTMSource: "hn", UTMMedium: "social", UTMCampaign: "launch", UTMContent: "top",
		UTMTerm: "analytics", Device: "Desktop", Browser: "Firefox", BrowserVersion: "121.0", OS: "Linux",
		OSVersion: "", CountryCode: "DE", RegionCode: "DE-BE", RegionName: "Berlin", City: "Berlin ümlaut \x1f"}
}

// sampleV1 is a record as version 1 wrote it: the event with its session,
// and the session rows (testdata/record-v1-event.bin holds its encoding).
func sampleV1() model.Record {
	t0 := time.Date(2026, 5, 3, 22, 59, 58, 0, time.UTC)
	a := sampleAttribution()
	event := &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "01890000-0000-7000-8000-000000000001", Name: "Signup",
		VisitorID: 1<<64 - 1, SessionID: 42, Pathname: "/pricing", PrevPathname: "/", TimeOnPrev: 31, Attribution: a,
		PropKeys: []string{"plan", "n"}, PropValues: []string{"pro", "1.5"}, RevenueAmount: -1999, RevenueCurrency: "EUR"}
	state := model.SessionRow{SiteID: "s1", SessionID: 42, VisitorID: 1<<64 - 1, Sign: 1, Version: 3, Start: t0.Add(-time.Minute),
		End: t0, Pageviews: 2, Events: 1, IsBounce: false, EntryPage: "/", ExitPage: "/pricing", Attribution: a}
	cancel := state
	cancel.Sign, cancel.Version, cancel.Events, cancel.IsBounce = -1, 2, 0, true
	return model.Record{Event: event, Sessions: []model.SessionRow{cancel, state}, Resolved: true}
}

func sampleRecords() map[string]model.Record {
	t0 := time.Date(2026, 5, 3, 22, 59, 58, 0, time.UTC)
	return map[string]model.Record{
		"event with revenue": {Event: &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "01890000-0000-7000-8000-000000000001",
			Name: "Signup", VisitorID: 1<<64 - 1, StableVisitor: true, Pathname: "/pricing", Attribution: sampleAttribution(),
			PropKeys: []string{"plan", "n"}, PropValues: []string{"pro", "1.5"}, RevenueAmount: 1999, RevenueCurrency: "EUR"},
			BaseCurrency: "USD"},
		"revenue from the tracking script": {Event: &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "e4", Name: "Purchase",
			RevenueAmount: 4999, RevenueCurrency: "EUR"}, BaseCurrency: "EUR", ClientRevenue: true},
		"pageview": {Event: &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "e2", Name: "pageview", Pathname: "/"}},
		"payment event": {Event: &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "p1", Name: "payment", VisitorID: 7,
			RevenueAmount: 500, RevenueCurrency: "USD"}, NoSession: true},
		"bot": {Bot: &model.BotEventRow{SiteID: "s1", Timestamp: t0, EventID: "e3", Reason: "crawler"}},
		"engagement": {Engagement: &model.EngagementRow{SiteID: "s1", Timestamp: t0, EventID: "g1", VisitorID: 1<<64 - 1,
			Pathname: "/app#/pricing", ScrollDepth: 100}},
		"empty": {},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for name, rec := range sampleRecords() {
		t.Run(name, func(t *testing.T) {
			got, err := model.DecodeRecord(model.AppendRecord(nil, rec))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rec, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// Session fields are the write buffer's to fill: they are not logged.
func TestRecordLeavesSessionsOut(t *testing.T) {
	rec := sampleV1()
	rec.Resolved = false
	got, err := model.DecodeRecord(model.AppendRecord(nil, rec))
	if err != nil {
		t.Fatal(err)
	}
	if got.Sessions != nil || got.Event.SessionID != 0 || got.Event.PrevPathname != "" || got.Event.TimeOnPrev != 0 {
		t.Errorf("session fields were logged: %+v", got)
	}
	if !got.NeedsSession() {
		t.Error("a new record's event needs a session")
	}
}

// A write-ahead log written by earlier versions (JSON, then binary version
// 1) is replayed after an upgrade, with the sessions it carries.
func TestRecordDecodesEarlierVersions(t *testing.T) {
	want := sampleV1()
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := os.ReadFile("testdata/record-v1-event.bin")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"json": data, "v1": v1} {
		got, err := model.DecodeRecord(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s record (-want +got):\n%s", name, diff)
		}
		if got.NeedsSession() {
			t.Errorf("%s: a record with its sessions needs none", name)
		}
	}
	bot, err := os.ReadFile("testdata/record-v1-bot.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := model.DecodeRecord(bot)
	if err != nil || got.Bot == nil || got.Bot.Reason != "crawler" {
		t.Errorf("v1 bot: %+v, %v", got, err)
	}
}

// Every truncation and a changed version byte are refused, never
// misread and never a panic.
func TestRecordCorrupt(t *testing.T) {
	data := model.AppendRecord(nil, sampleRecords()["event with revenue"])
	for n := range len(data) {
		if _, err := model.DecodeRecord(data[:n]); !errors.Is(err, model.ErrCorruptRecord) {
			t.Fatalf("truncated to %d of %d bytes: %v, want ErrCorruptRecord", n, len(data), err)
		}
	}
	bad := append([]byte{9}, data[1:]...)
	if _, err := model.DecodeRecord(bad); !errors.Is(err, model.ErrCorruptRecord) {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := model.DecodeRecord(append(data, 0)); !errors.Is(err, model.ErrCorruptRecord) {
		t.Errorf("trailing byte: %v", err)
	}
	// a scroll depth is a percentage: more than 100 is no record of ours
	g := model.AppendRecord(nil, sampleRecords()["engagement"])
	g[len(g)-1] = 101
	if _, err := model.DecodeRecord(g); !errors.Is(err, model.ErrCorruptRecord) {
		t.Errorf("scroll depth 101: %v", err)
	}
}

func TestAttributionRoundTrip(t *testing.T) {
	a := sampleAttribution()
	got, err := model.DecodeAttribution(model.AppendAttribution(nil, a))
	if err != nil || got != a {
		t.Errorf("got %+v, %v; want %+v", got, err, a)
	}
	if _, err := model.DecodeAttribution([]byte{5, 'a'}); err == nil {
		t.Error("a truncated attribution decoded")
	}
}

// FuzzDecodeRecord: arbitrary bytes never panic; what decodes (in the
// current version) encodes back to a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, rec := range sampleRecords() {
		f.Add(model.AppendRecord(nil, rec))
	}
	f.Add([]byte(`{"e":{"site":"s"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := model.DecodeRecord(data)
		if err != nil || rec.Resolved { // earlier versions are read, never written
			return
		}
		again, err := model.DecodeRecord(model.AppendRecord(nil, rec))
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if diff := cmp.Diff(rec, again); diff != "" {
			t.Fatalf("re-encoding changed the record:\n%s", diff)
		}
	})
}

// BenchmarkDecodeRecord decodes a pageview with its attribution, as the
// write buffer does for every event it reads back from its log.
func BenchmarkDecodeRecord(b *testing.B) {
	p := model.AppendRecord(nil, sampleRecords()["event with revenue"])
	b.ReportAllocs()
	for b.Loop() {
		if _, err := model.DecodeRecord(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodedSizes: the sizes encoders take room by are the lengths the
// encodings have, at each boundary of a varint's length.
func TestEncodedSizes(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<56 - 1, 1 << 56, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		if got, want := model.UvarintSize(x), len(binary.AppendUvarint(nil, x)); got != want {
			t.Errorf("UvarintSize(%d) = %d, want %d", x, got, want)
		}
	}
	for _, x := range []int64{0, 1, -1, 63, -64, 64, -65, 1_780_000_000, math.MaxInt64, math.MinInt64} {
		if got, want := model.VarintSize(x), len(binary.AppendVarint(nil, x)); got != want {
			t.Errorf("VarintSize(%d) = %d, want %d", x, got, want)
		}
	}
	for _, n := range []int{0, 127, 128, 300} {
		s := strings.Repeat("a", n)
		if got, want := model.StringSize(s), len(model.AppendString(nil, s)); got != want {
			t.Errorf("StringSize of %d bytes = %d, want %d", n, got, want)
		}
	}
	a := sampleAttribution()
	a.Referrer = strings.Repeat("r", 200) // a length of two bytes
	if got, want := model.AttributionSize(&a), len(model.AppendAttribution(nil, a)); got != want {
		t.Errorf("AttributionSize = %d, want %d", got, want)
	}
}
