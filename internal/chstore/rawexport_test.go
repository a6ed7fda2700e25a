package chstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// The export's reads: events of one site and range only, in the order of
// time then event id, every column back as stored, counted by hour; a
// consumer's error stops the stream at once.
func TestStreamEvents(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	full := model.EventRow{SiteID: "s1", Timestamp: t0.Add(90 * time.Minute), EventID: "e-full", Name: "signup",
		VisitorID: 1<<64 - 1, SessionID: 42, Pathname: "/a",
		Attribution: model.Attribution{Hostname: "example.com", Referrer: "t.co/x", ReferrerSource: "Twitter",
			SourceType: "social", UTMSource: "us", UTMMedium: "um", UTMCampaign: "uc", UTMContent: "ut", UTMTerm: "uk",
			Device: "Mobile", Browser: "Safari", BrowserVersion: "17.1", OS: "iOS", OSVersion: "17.1",
			CountryCode: "US", RegionCode: "US-WA", RegionName: "Washington", City: "Milton"},
		PropKeys: []string{"plan", "seats"}, PropValues: []string{"pro", "3"}, RevenueAmount: 4999, RevenueCurrency: "EUR"}
	rows := []model.EventRow{
		full,
		{SiteID: "s1", Timestamp: t0, EventID: "e-b", Name: "pageview", VisitorID: 7, SessionID: 8, Pathname: "/"},
		{SiteID: "s1", Timestamp: t0, EventID: "e-a", Name: "pageview", VisitorID: 7, SessionID: 8, Pathname: "/"},
		{SiteID: "s1", Timestamp: t0.Add(-time.Second), EventID: "e-before", Name: "pageview", Pathname: "/"},
		{SiteID: "s1", Timestamp: t0.Add(3 * time.Hour), EventID: "e-end", Name: "pageview", Pathname: "/"},
		{SiteID: "s2", Timestamp: t0, EventID: "e-other-site", Name: "pageview", Pathname: "/"},
	}
	if err := s.InsertEvents(ctx, "", rows); err != nil {
		t.Fatal(err)
	}
	from, to := t0, t0.Add(3*time.Hour)

	var got []model.EventRow
	err := s.StreamEvents(ctx, "s1", from, to, func(r *model.EventRow) error {
		got = append(got, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range got {
		order = append(order, r.EventID)
	}
	if diff := cmp.Diff([]string{"e-a", "e-b", "e-full"}, order); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	got[2].Timestamp = got[2].Timestamp.UTC()
	if diff := cmp.Diff(full, got[2]); diff != "" {
		t.Errorf("the full row (-want +got):\n%s", diff)
	}

	hours, err := s.EventHours(ctx, "s1", from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := []export.HourCount{{Start: t0, Events: 2}, {Start: t0.Add(time.Hour), Events: 1}}
	if diff := cmp.Diff(want, hours); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}

	stop := errors.New("stop")
	n := 0
	err = s.StreamEvents(ctx, "s1", from, to, func(*model.EventRow) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("a consumer's error: %v after %d rows, want it back after 1", err, n)
	}
}

// A stream larger than the blocks ClickHouse sends stays in order across
// blocks, and the connection it used serves the next query.
func TestStreamEventsAcrossBlocks(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	const n = 30_000
	rows := make([]model.EventRow, n)
	for i := range rows {
		rows[i] = model.EventRow{SiteID: "s1", Timestamp: t0.Add(time.Duration(n-i) * time.Second),
			EventID: fmt.Sprintf("e%06d", n-i), Name: "pageview", Pathname: "/"}
	}
	if err := s.InsertEvents(ctx, "", rows); err != nil {
		t.Fatal(err)
	}
	seen, last := 0, ""
	err := s.StreamEvents(ctx, "s1", t0, t0.Add(24*time.Hour), func(r *model.EventRow) error {
		if r.EventID <= last {
			return fmt.Errorf("%s after %s", r.EventID, last)
		}
		seen, last = seen+1, r.EventID
		return nil
	})
	if err != nil || seen != n {
		t.Fatalf("streamed %d of %d: %v", seen, n, err)
	}
	for range 3 { // stopped early, then again: no connection is left busy
		err = s.StreamEvents(ctx, "s1", t0, t0.Add(24*time.Hour), func(*model.EventRow) error { return errors.New("enough") })
		if err == nil {
			t.Fatal("no error from a stopped stream")
		}
	}
	hours, err := s.EventHours(ctx, "s1", t0, t0.Add(24*time.Hour))
	if err != nil || len(hours) != 9 {
		t.Errorf("hours after stopped streams: %d, %v", len(hours), err)
	}
}
