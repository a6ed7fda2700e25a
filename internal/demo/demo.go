// Package demo generates realistic synthetic traffic (sessions of visitors
// with sources, campaigns, devices, locations, pages and custom events) and
// loads it straight into ClickHouse, for demos and benchmarks.
package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/model"
)

// Sink stores generated rows (the ClickHouse store).
type Sink interface {
	InsertEvents(ctx context.Context, id string, rows []model.EventRow) error
	InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error
}

// Options describe the traffic to generate.
type Options struct {
	Site   model.SiteID
	Events int       // approximate number of events (pageviews + custom events)
	End    time.Time // the traffic spans Days days before End
	Days   int
	Seed   uint64
	// Batch is the number of events per insert.
	Batch int
	// Progress is called after each batch with the events written so far.
	Progress func(written int)
}

type weighted[T any] struct {
	v T
	w float64
}

func pick[T any](r *rand.Rand, items []weighted[T]) T {
	total := 0.0
	for _, it := range items {
		total += it.w
	}
	x := r.Float64() * total
	for _, it := range items {
		if x < it.w {
			return it.v
		}
		x -= it.w
	}
	return items[len(items)-1].v
}

type source struct{ name, kind, referrer, utmSource, utmMedium, utmCampaign string }

var sources = []weighted[source]{
	{source{"Direct / None", model.SourceDirect, "", "", "", ""}, 35},
	{source{"Google", model.SourceSearch, "google.com/", "", "", ""}, 30},
	{source{"Bing", model.SourceSearch, "bing.com/", "", "", ""}, 3},
	{source{"DuckDuckGo", model.SourceSearch, "duckduckgo.com/", "", "", ""}, 2},
	{source{"Twitter", model.SourceSocial, "t.co/", "", "", ""}, 5},
	{source{"Facebook", model.SourceSocial, "facebook.com/", "", "", ""}, 5},
	{source{"Reddit", model.SourceSocial, "reddit.com/r/golang", "", "", ""}, 4},
	{source{"Hacker News", model.SourceSocial, "news.ycombinator.com/item", "", "", ""}, 3},
	{source{"newsletter", model.SourceReferral, "", "newsletter", "email", "spring-launch"}, 5},
	{source{"producthunt.com", model.SourceReferral, "producthunt.com/posts/tally", "", "", ""}, 3},
	{source{"dev.to", model.SourceReferral, "dev.to/someone/post", "", "", ""}, 3},
	{source{"Google", model.SourceSearch, "", "google", "cpc", "brand"}, 2},
}

type client struct{ device, browser, browserVersion, os, osVersion string }

var clients = []weighted[client]{
	{client{"Desktop", "Chrome", "120.0", "Windows", "10"}, 28},
	{client{"Desktop", "Chrome", "120.0", "macOS", "10.15"}, 10},
	{client{"Desktop", "Safari", "17.1", "macOS", "10.15"}, 8},
	{client{"Desktop", "Firefox", "121.0", "Linux", ""}, 5},
	{client{"Desktop", "Edge", "120.0", "Windows", "10"}, 6},
	{client{"Mobile", "Safari", "17.1", "iOS", "17.1"}, 20},
	{client{"Mobile", "Chrome", "120.0", "Android", "14"}, 15},
	{client{"Mobile", "Samsung Internet", "23.0", "Android", "13"}, 3},
	{client{"Tablet", "Safari", "16.6", "iOS", "16.6"}, 4},
	{client{"", "", "", "", ""}, 1},
}

type place struct{ country, region, regionName, city string }

var places = []weighted[place]{
	{place{"US", "US-CA", "California", "San Francisco"}, 10},
	{place{"US", "US-CA", "California", "Los Angeles"}, 6},
	{place{"US", "US-NY", "New York", "New York"}, 9},
	{place{"US", "US-TX", "Texas", "Austin"}, 5},
	{place{"US", "US-WA", "Washington", "Seattle"}, 4},
	{place{"GB", "GB-ENG", "England", "London"}, 9},
	{place{"GB", "GB-SCT", "Scotland", "Edinburgh"}, 2},
	{place{"DE", "DE-BE", "Berlin", "Berlin"}, 8},
	{place{"DE", "DE-BY", "Bavaria", "Munich"}, 4},
	{place{"FR", "FR-IDF", "Île-de-France", "Paris"}, 6},
	{place{"IN", "IN-KA", "Karnataka", "Bengaluru"}, 7},
	{place{"BR", "BR-SP", "São Paulo", "São Paulo"}, 4},
	{place{"JP", "JP-13", "Tokyo", "Tokyo"}, 4},
	{place{"CA", "CA-ON", "Ontario", "Toronto"}, 4},
	{place{"NL", "NL-NH", "North Holland", "Amsterdam"}, 3},
	{place{"", "", "", ""}, 5},
}

var customEvents = []weighted[string]{{"signup", 5}, {"download", 3}, {"purchase", 1}, {"newsletter_subscribe", 2}}

// paths are the site's pages; popularity follows a Zipf law.
var paths = func() []string {
	base := []string{"/", "/pricing", "/features", "/docs", "/blog", "/about", "/signup", "/login", "/contact", "/changelog"}
	for i := 1; i <= 190; i++ {
		base = append(base, fmt.Sprintf("/blog/post-%d", i))
	}
	return base
}()

// Generate writes about opts.Events events (and their sessions) and returns
// the number of events written.
func Generate(ctx context.Context, sink Sink, opts Options) (int, error) {
	if opts.Days <= 0 {
		opts.Days = 30
	}
	if opts.Batch <= 0 {
		opts.Batch = 100_000
	}
	r := rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(paths)-1))
	start := opts.End.Add(-time.Duration(opts.Days) * 24 * time.Hour)
	visitorPool := max(1, opts.Events/4)
	var events []model.EventRow
	var sessions []model.SessionRow
	written := 0
	flush := func() error {
		if err := sink.InsertEvents(ctx, "", events); err != nil {
			return err
		}
		if err := sink.InsertSessions(ctx, "", sessions); err != nil {
			return err
		}
		written += len(events)
		events, sessions = events[:0], sessions[:0]
		if opts.Progress != nil {
			opts.Progress(written)
		}
		return nil
	}
	for written+len(events) < opts.Events {
		at := sessionStart(r, start, opts.Days)
		visitor := uint64(r.IntN(visitorPool))*0x9e3779b97f4a7c15 + 1 // spread over UInt64 for SAMPLE BY
		session := r.Uint64() | 1
		events, sessions = appendSession(r, zipf, opts.Site, visitor, session, at, events, sessions)
		if len(events) >= opts.Batch {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	if len(events) > 0 {
		if err := flush(); err != nil {
			return written, err
		}
	}
	return written, nil
}

// sessionStart draws a time with more traffic on weekdays and in the afternoon (UTC).
func sessionStart(r *rand.Rand, start time.Time, days int) time.Time {
	for {
		t := start.Add(time.Duration(r.Int64N(int64(days) * int64(24*time.Hour))))
		hour := float64(t.Hour()) + float64(t.Minute())/60
		w := 0.55 + 0.45*math.Sin((hour-9)/24*2*math.Pi)
		if t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
			w *= 0.7
		}
		if r.Float64() < w {
			return t.Truncate(time.Second)
		}
	}
}

func appendSession(r *rand.Rand, zipf *rand.Zipf, site model.SiteID, visitor, session uint64, at time.Time,
	events []model.EventRow, sessions []model.SessionRow) ([]model.EventRow, []model.SessionRow) {
	src, cl, pl := pick(r, sources), pick(r, clients), pick(r, places)
	attr := model.Attribution{Hostname: "example.com", Referrer: src.referrer, ReferrerSource: src.name, SourceType: src.kind,
		UTMSource: src.utmSource, UTMMedium: src.utmMedium, UTMCampaign: src.utmCampaign,
		Device: cl.device, Browser: cl.browser, BrowserVersion: cl.browserVersion, OS: cl.os, OSVersion: cl.osVersion,
		CountryCode: pl.country, RegionCode: pl.region, RegionName: pl.regionName, City: pl.city}
	pageviews := 1
	if r.Float64() > 0.45 { // 45 % bounce
		pageviews = 2 + int(r.ExpFloat64()*2)
		pageviews = min(pageviews, 15)
	}
	s := model.SessionRow{SiteID: site, SessionID: session, VisitorID: visitor, Sign: 1, Version: 1, Start: at, End: at,
		Attribution: attr}
	t, prev, prevAt := at, "", at
	for i := range pageviews {
		if i > 0 {
			t = t.Add(time.Duration(10+r.IntN(170)) * time.Second)
		}
		path := paths[zipf.Uint64()]
		ev := model.EventRow{SiteID: site, Timestamp: t, EventID: uuid.NewString(), Name: "pageview", VisitorID: visitor,
			SessionID: session, Pathname: path, Attribution: attr}
		if prev != "" {
			ev.PrevPathname, ev.TimeOnPrev = prev, uint32(t.Sub(prevAt)/time.Second)
		}
		events = append(events, ev)
		if i == 0 {
			s.EntryPage = path
		}
		s.ExitPage, prev, prevAt = path, path, t
	}
	s.Pageviews = uint32(pageviews)
	if r.Float64() < 0.1 {
		t = t.Add(time.Duration(5+r.IntN(60)) * time.Second)
		events = append(events, model.EventRow{SiteID: site, Timestamp: t, EventID: uuid.NewString(), Name: pick(r, customEvents),
			VisitorID: visitor, SessionID: session, Pathname: prev, Attribution: attr,
			PropKeys: []string{"plan"}, PropValues: []string{[]string{"free", "pro", "enterprise"}[r.IntN(3)]}})
		s.Events = 1
	}
	s.End = t
	s.IsBounce = s.Pageviews == 1 && s.Events == 0
	return events, append(sessions, s)
}
