package model_test

import (
	"encoding/json"
	"errors"
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

func sampleRecords() map[string]model.Record {
	t0 := time.Date(2026, 5, 3, 22, 59, 58, 0, time.UTC)
	a := sampleAttribution()
	event := &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "01890000-0000-7000-8000-000000000001", Name: "Signup",
		VisitorID: 1<<64 - 1, SessionID: 42, Pathname: "/pricing", PrevPathname: "/", TimeOnPrev: 31, Attribution: a,
		PropKeys: []string{"plan", "n"}, PropValues: []string{"pro", "1.5"}, RevenueAmount: -1999, RevenueCurrency: "EUR"}
	state := model.SessionRow{SiteID: "s1", SessionID: 42, VisitorID: 1<<64 - 1, Sign: 1, Version: 3, Start: t0.Add(-time.Minute),
		End: t0, Pageviews: 2, Events: 1, IsBounce: false, EntryPage: "/", ExitPage: "/pricing", Attribution: a}
	cancel := state
	cancel.Sign, cancel.Version, cancel.Events, cancel.IsBounce = -1, 2, 0, true
	return map[string]model.Record{
		"event with sessions": {Event: event, Sessions: []model.SessionRow{cancel, state}},
		"event without session": {Event: &model.EventRow{SiteID: "s1", Timestamp: t0, EventID: "e2", Name: "pageview",
			Pathname: "/"}},
		"bot":   {Bot: &model.BotEventRow{SiteID: "s1", Timestamp: t0, EventID: "e3", Reason: "crawler"}},
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

// A write-ahead log written by a version that encoded records as JSON is
// replayed after the upgrade.
func TestRecordDecodesJSON(t *testing.T) {
	rec := sampleRecords()["event with sessions"]
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := model.DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("JSON record (-want +got):\n%s", diff)
	}
}

// Every truncation and a changed version byte are refused, never
// misread and never a panic.
func TestRecordCorrupt(t *testing.T) {
	data := model.AppendRecord(nil, sampleRecords()["event with sessions"])
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

// FuzzDecodeRecord: arbitrary bytes never panic; what decodes encodes back
// to a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, rec := range sampleRecords() {
		f.Add(model.AppendRecord(nil, rec))
	}
	f.Add([]byte(`{"e":{"site":"s"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := model.DecodeRecord(data)
		if err != nil || (len(data) > 0 && data[0] == '{') {
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
