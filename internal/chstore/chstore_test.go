package chstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

func TestMigrateIsIdempotent(t *testing.T) {
	s, _ := testenv.ClickHouse(t) // migrated once
	applied, err := s.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Errorf("second Migrate = %v, %v; want nothing applied", applied, err)
	}
}

func TestInsertAndFind(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	attr := model.Attribution{Hostname: "example.com", ReferrerSource: "Google", SourceType: "search", CountryCode: "DE"}
	events := []model.EventRow{
		{SiteID: "s1", Timestamp: t0, EventID: "e1", Name: "pageview", VisitorID: 1, StableVisitor: true, SessionID: 10, Pathname: "/a",
			Attribution: attr},
		{SiteID: "s1", Timestamp: t0.Add(time.Minute), EventID: "e2", Name: "signup", VisitorID: 1, SessionID: 10, Pathname: "/a",
			Attribution: attr, PropKeys: []string{"plan"}, PropValues: []string{"pro"}},
	}
	if err := s.InsertEvents(ctx, "", events); err != nil {
		t.Fatal(err)
	}
	v1 := model.SessionRow{SiteID: "s1", SessionID: 10, VisitorID: 1, Sign: 1, Version: 1, Start: t0, End: t0,
		Pageviews: 1, IsBounce: true, EntryPage: "/a", ExitPage: "/a", Attribution: attr}
	cancel := v1
	cancel.Sign = -1
	v2 := v1
	v2.Version, v2.End, v2.Events, v2.IsBounce = 2, t0.Add(time.Minute), 1, false
	if err := s.InsertSessions(ctx, "", []model.SessionRow{v1}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertSessions(ctx, "", []model.SessionRow{cancel, v2}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertBotEvents(ctx, "", []model.BotEventRow{{SiteID: "s1", Timestamp: t0, EventID: "b1", Reason: "crawlerdetect"}}); err != nil {
		t.Fatal(err)
	}

	span := model.Span{Sites: []model.SiteID{"s1"}, From: t0, To: t0.Add(time.Minute)}
	found, err := s.ExistingEventIDs(ctx, "events", span, []string{"e1", "e2", "e3"})
	if err != nil || !found["e1"] || !found["e2"] || found["e3"] {
		t.Errorf("ExistingEventIDs = %v, %v; want e1 and e2", found, err)
	}
	bots, err := s.ExistingEventIDs(ctx, "bot_events", span, []string{"b1", "e1"})
	if err != nil || !bots["b1"] || bots["e1"] {
		t.Errorf("ExistingEventIDs(bot_events) = %v, %v", bots, err)
	}
	rows, err := s.ExistingSessionRows(ctx, span, []uint64{10})
	if err != nil || len(rows) != 3 || !rows[v1.Key()] || !rows[cancel.Key()] || !rows[v2.Key()] {
		t.Errorf("ExistingSessionRows = %v, %v; want the three rows", rows, err)
	}
	if _, err := s.ExistingEventIDs(ctx, "users; DROP", span, []string{"x"}); err == nil {
		t.Error("an unknown table was accepted")
	}

	// the rows read back are the rows written (the benchmark re-inserts them)
	back, err := s.EventRows(ctx, "s1", 10)
	if err != nil || len(back) != 2 {
		t.Fatalf("EventRows = %d rows, %v; want 2", len(back), err)
	}
	for _, r := range back {
		want := events[0]
		if r.EventID == "e2" {
			want = events[1]
		}
		r.Timestamp = r.Timestamp.UTC()
		if fmt.Sprint(r) != fmt.Sprint(want) { // Sprint: an empty array reads back as [], like nil
			t.Errorf("read back %+v, wrote %+v", r, want)
		}
	}
	sessionsBack, err := s.SessionRows(ctx, "s1", 10)
	if err != nil || len(sessionsBack) != 3 {
		t.Fatalf("SessionRows = %d rows, %v; want 3", len(sessionsBack), err)
	}

	// Sign-weighted sums see exactly one live session with the latest state.
	var sessions, pageviews, custom, bounces int64
	var duration float64
	if err := s.QueryRow(ctx, `SELECT sum(sign), sum(sign * pageviews), sum(sign * events), sum(sign * is_bounce),
		sum(sign * duration) / sum(sign) FROM sessions WHERE site_id = ?`, "s1").Scan(&sessions, &pageviews, &custom, &bounces, &duration); err != nil {
		t.Fatal(err)
	}
	if sessions != 1 || pageviews != 1 || custom != 1 || bounces != 0 || duration != 60 {
		t.Errorf("sessions=%d pageviews=%d events=%d bounces=%d duration=%v; want 1 1 1 0 60", sessions, pageviews, custom, bounces, duration)
	}
}

// Lookups of more ids than fit in one query are split.
func TestExistingEventIDsManyIDs(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	const n = 4500
	rows := make([]model.EventRow, n)
	ids := make([]string, 0, n+10)
	for i := range rows {
		rows[i] = model.EventRow{SiteID: "s1", Timestamp: t0.Add(time.Duration(i) * time.Second), Name: "pageview",
			EventID: fmt.Sprintf("01a1fd5a-2e8a-7e9e-a87a-%012d", i)}
		ids = append(ids, rows[i].EventID)
	}
	for i := range 10 {
		ids = append(ids, fmt.Sprintf("missing-%d", i))
	}
	if err := s.InsertEvents(ctx, "", rows); err != nil {
		t.Fatal(err)
	}
	found, err := s.ExistingEventIDs(ctx, "events", model.Span{Sites: []model.SiteID{"s1"}, From: t0, To: t0.Add(n * time.Second)}, ids)
	if err != nil || len(found) != n || found["missing-3"] {
		t.Errorf("found %d ids (%v), want %d", len(found), err, n)
	}
}

// TestExistingEventIDsReadTheSitesRowsOnly: a lookup finds a site's rows by
// the events' sort key, so it reads the small site's few granules and not
// the large site's rows of the same day. ClickHouse refuses a query that
// would read more than max_rows_to_read rows: 200,000 events of the large
// site (100,000 a shard on the cluster) against a limit of 60,000, where
// the small site's 500 events take one or two granules of 8,192 rows.
func TestExistingEventIDsReadTheSitesRowsOnly(t *testing.T) {
	s, _ := testenv.ClickHouse(t)
	ctx := context.Background()
	t0 := time.Date(2026, 6, 8, 9, 0, 0, 0, time.UTC)
	row := func(site model.SiteID, i int) model.EventRow {
		return model.EventRow{SiteID: site, Timestamp: t0.Add(time.Duration(i) * 100 * time.Millisecond), Name: "pageview",
			VisitorID: uint64(i), EventID: fmt.Sprintf("%s-%07d", site, i)}
	}
	big := make([]model.EventRow, 200_000)
	for i := range big {
		big[i] = row("big-site", i)
	}
	small := make([]model.EventRow, 500)
	ids := []string{"small-site-missing"}
	for i := range small {
		small[i] = row("small-site", i*400)
		ids = append(ids, small[i].EventID)
	}
	if err := s.InsertEvents(ctx, "", append(big, small...)); err != nil {
		t.Fatal(err)
	}
	limited := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_rows_to_read": 60_000}))
	span := model.Span{Sites: []model.SiteID{"small-site"}, From: t0, To: t0.Add(6 * time.Hour)}
	found, err := s.ExistingEventIDs(limited, "events", span, ids)
	if err != nil || len(found) != len(small) || found["small-site-missing"] || !found["small-site-0000400"] {
		t.Errorf("found %d of the small site's %d ids: %v", len(found), len(small), err)
	}
	// the limit binds: the large site's lookup reads its 200,000 rows
	bigSpan := model.Span{Sites: []model.SiteID{"big-site"}, From: t0, To: t0.Add(6 * time.Hour)}
	if _, err := s.ExistingEventIDs(limited, "events", bigSpan, []string{big[0].EventID}); err == nil {
		t.Error("the large site's lookup read under 60,000 rows; the test's limit proves nothing")
	}
}
