package app_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/demo"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// BenchmarkStatsEndpoints loads TALLY_BENCH_EVENTS synthetic events (default
// 1M) for one site over 30 days into a ClickHouse database kept between runs
// (tally_bench_<N>), then calls every stats endpoint for the 30-day range
// and reports p50 and p95 latency per endpoint:
//
//	TALLY_BENCH_EVENTS=10000000 go test -run '^$' -bench StatsEndpoints -benchtime 20x ./internal/app
func BenchmarkStatsEndpoints(b *testing.B) {
	events := 1_000_000
	if v := os.Getenv("TALLY_BENCH_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("TALLY_BENCH_EVENTS: %v", err)
		}
		events = n
	}
	cfg := testenv.Config(b)
	cfg.ClickHouseDatabase = fmt.Sprintf("tally_bench_%d", events)
	end := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	ch, err := chstore.Open(ctx, app.CHOptions(cfg))
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	if _, err := ch.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	site := model.SiteID("benchsite0001")
	var have uint64
	if err := ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_id = ?", string(site)).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if int(have) < events {
		b.Logf("loading %d events into %s (kept for later runs) ...", events-int(have), cfg.ClickHouseDatabase)
		start := time.Now()
		if _, err := demo.Generate(ctx, ch, demo.Options{Site: site, Events: events - int(have), End: end, Days: 30, Seed: 7}); err != nil {
			b.Fatal(err)
		}
		b.Logf("loaded in %v", time.Since(start).Round(time.Second))
	}

	h := newHarnessWith(b, cfg)
	if _, err := h.app.PG.CreateSite(ctx, model.Site{ID: site, Domain: "example.com", Timezone: "UTC", BaseCurrency: "USD"}, h.userID); err != nil {
		b.Fatal(err)
	}
	c := h.client(h.key)
	p := client.StatsParams{SiteID: string(site), DateFrom: "2026-05-01", DateTo: "2026-05-30", Timezone: "UTC",
		Country: "US", Region: "US-CA"}
	funnel, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: string(site), Name: "Pricing to checkout", Steps: []api.FunnelStep{
		{Type: "pageview", PagePath: "/pricing"}, {Type: "custom_event", EventName: "signup"},
		{Type: "pageview", PagePath: "/checkout"}, {Type: "custom_event", EventName: "checkout_started"}}})
	if err != nil {
		b.Fatal(err)
	}
	fp := p
	fp.Country, fp.Region, fp.FunnelID = "", "", funnel.FunnelID
	calls := []struct {
		name string
		call func() error
	}{
		{"overview", func() error { _, err := c.Overview(ctx, p); return err }},
		{"pages", func() error { _, err := c.Pages(ctx, p); return err }},
		{"sources", func() error { _, err := c.Sources(ctx, p); return err }},
		{"entry-pages", func() error { _, err := c.EntryPages(ctx, p); return err }},
		{"exit-pages", func() error { _, err := c.ExitPages(ctx, p); return err }},
		{"journeys", func() error { _, err := c.Journeys(ctx, p); return err }},
		{"devices", func() error { _, err := c.Devices(ctx, p); return err }},
		{"browsers", func() error { _, err := c.Browsers(ctx, p); return err }},
		{"operating-systems", func() error { _, err := c.OperatingSystems(ctx, p); return err }},
		{"countries", func() error { _, err := c.Countries(ctx, p); return err }},
		{"regions", func() error { _, err := c.Regions(ctx, p); return err }},
		{"cities", func() error { _, err := c.Cities(ctx, p); return err }},
		{"events", func() error { _, err := c.Events(ctx, p); return err }},
		{"funnel", func() error { _, err := c.FunnelReport(ctx, fp); return err }},
		{"realtime", func() error { _, err := c.Realtime(ctx, string(site)); return err }},
	}
	for _, call := range calls {
		b.Run(call.name, func(b *testing.B) {
			if err := call.call(); err != nil { // warm-up
				b.Fatal(err)
			}
			durations := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := call.call(); err != nil {
					b.Fatal(err)
				}
				durations = append(durations, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
			q := func(p float64) float64 {
				return float64(durations[min(len(durations)-1, int(p*float64(len(durations))))].Microseconds()) / 1000
			}
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.95), "p95-ms")
		})
	}
}
