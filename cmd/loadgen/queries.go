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
	// Err is the error of a failed call; P50 and P95 are then the time it
	// took.
	Err string
}

// latency shows p50 or p95 of r, or that its endpoint failed.
func (r queryResult) latency(d time.Duration) string {
	if r.Err != "" {
		return "failed after " + ms(d)
	}
	return ms(d)
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
	{"channels", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Channels(ctx, p)
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
	{"journeys", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Journeys(ctx, p)
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
	{"browser-versions (Chrome)", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		p.Browser = "Chrome"
		r, err := c.BrowserVersions(ctx, p)
		return r.Meta.Sampled, err
	}},
	{"os-versions (Windows)", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		p.OS = "Windows"
		r, err := c.OSVersions(ctx, p)
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
	{"retention", func(ctx context.Context, c *client.Client, p client.StatsParams) (bool, error) {
		r, err := c.Retention(ctx, p)
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
// for the last days days (today included), one call at a time. An endpoint
// whose call fails is recorded with the error and the time the failed call
// took, and the others are still measured.
func queryLatencies(ctx context.Context, c *client.Client, site string, days, runs int, progress func(string)) []queryResult {
	today := time.Now().UTC()
	p := client.StatsParams{SiteID: site, DateFrom: today.AddDate(0, 0, -(days - 1)).Format(time.DateOnly),
		DateTo: today.Format(time.DateOnly), Timezone: "UTC"}
	var out []queryResult
	for _, sc := range statsCalls {
		progress(fmt.Sprintf("%s, %d days", sc.name, days))
		res := queryResult{Endpoint: sc.name, Range: fmt.Sprintf("%dd", days)}
		took := make([]time.Duration, 0, runs)
		for i := 0; i <= runs; i++ { // the first is a warm-up
			start := time.Now()
			sampled, err := sc.call(ctx, c, p)
			if err != nil {
				res.Err, res.P50, res.P95 = err.Error(), time.Since(start), time.Since(start)
				progress(fmt.Sprintf("%s, %d days: failed: %v", sc.name, days, err))
				break
			}
			if i > 0 {
				took = append(took, time.Since(start))
			}
			res.Sampled = sampled
		}
		if res.Err == "" {
			slices.Sort(took)
			r := loadResult{Latencies: took}
			res.P50, res.P95 = r.percentile(50), r.percentile(95)
		}
		out = append(out, res)
	}
	return out
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
