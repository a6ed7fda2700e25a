package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// queryResult is the latency of one stats endpoint over one range.
type queryResult struct {
	Endpoint, Range string
	P50, P95        time.Duration
	Sampled         bool
}

type statsCall struct {
	name string
	call func(ctx context.Context, c *client.Client, p client.StatsParams) (sampled bool, err error)
}

// statsCalls are every stats report of the API, with the parameters the
// drill-downs need.
var statsCalls = []statsCall{
	{"overview", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Overview(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"pages", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Pages(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"sources", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Sources(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"entry-pages", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.EntryPages(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"exit-pages", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.ExitPages(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"devices", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Devices(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"browsers", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Browsers(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"operating-systems", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.OperatingSystems(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"countries", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Countries(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"regions (US)", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		p.Country = "US"
		r, err := c.Regions(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"cities (US-CA)", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		p.Region = "US-CA"
		r, err := c.Cities(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"events", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Events(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"revenue", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		_, err := c.Revenue(ctx, p)
		return false, err
	}},
	{"goals/conversions", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		_, err := c.Conversions(ctx, p)
		return false, err
	}},
	{"funnel (4 steps)", funnelReport()},
	{"realtime", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		_, err := c.Realtime(ctx, p.SiteID)
		return false, err
	}},
	{"ingestion", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		_, err := c.Ingestion(ctx, p)
		return false, err
	}},
}

// queryLatencies calls every stats endpoint runs times (after one warm-up)
// for the last days days (today included), one call at a time.
func queryLatencies(ctx context.Context, c *client.Client, site string, days, runs int, progress func(string)) ([]queryResult, error) {
	today := time.Now().UTC()
	p := client.StatsParams{SiteID: site, DateFrom: today.AddDate(0, 0, -(days - 1)).Format(time.DateOnly),
		DateTo: today.Format(time.DateOnly), Timezone: "UTC"}
	var out []queryResult
	for _, sc := range statsCalls {
		progress(fmt.Sprintf("%s, %d days", sc.name, days))
		sampled, err := sc.call(ctx, c, p) // warm-up
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		took := make([]time.Duration, runs)
		for i := range took {
			start := time.Now()
			if _, err := sc.call(ctx, c, p); err != nil {
				return nil, fmt.Errorf("%s: %w", sc.name, err)
			}
			took[i] = time.Since(start)
		}
		slices.Sort(took)
		r := loadResult{Latencies: took}
		out = append(out, queryResult{Endpoint: sc.name, Range: fmt.Sprintf("%dd", days), P50: r.percentile(50),
			P95: r.percentile(95), Sampled: sampled})
	}
	return out, nil
}

// benchFunnel is the demo site's path to a purchase: the pricing page, a
// signup, the checkout page, a started checkout, within a day.
var benchFunnel = []api.FunnelStep{{Type: "pageview", PagePath: "/pricing"}, {Type: "custom_event", EventName: "signup"},
	{Type: "pageview", PagePath: "/checkout"}, {Type: "custom_event", EventName: "checkout_started"}}

// funnelReport calls the funnel report of benchFunnel, which it finds on the
// site or creates on the first call (the warm-up), once per site.
func funnelReport() func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
	ids := map[string]string{}
	return func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		id := ids[p.SiteID]
		if id == "" {
			list, err := c.Funnels(ctx, p.SiteID)
			if err != nil {
				return false, err
			}
			for _, f := range list {
				if f.Name == "Bench: pricing to checkout" {
					id = f.FunnelID
				}
			}
			if id == "" {
				f, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: p.SiteID, Name: "Bench: pricing to checkout", Steps: benchFunnel})
				if err != nil {
					return false, err
				}
				id = f.FunnelID
			}
			ids[p.SiteID] = id
		}
		p.FunnelID = id
		r, err := c.FunnelReport(ctx, p)
		return r.Meta.Sampled, err
	}
}
