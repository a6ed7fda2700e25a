package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Above the threshold a range is read on a sample of visitors, counts are
// scaled back and meta.sampled says so; below it, answers are exact.
func TestSampling(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.clock.Set(time.Date(2026, 5, 3, 12, 0, 0, 0, time.UTC))
	const visitors, perVisitor = 400, 2
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for v := w; v < visitors; v += 8 {
				for i := range perVisitor {
					req := pageview(h, fmt.Sprintf("https://example.com/p/%d", i))
					req.VisitorID = fmt.Sprint("sampled-", v)
					req.UserAgent = fixtureUAs[0].ua // Chrome 121
					if _, err := h.client(h.key).Pageview(ctx, req); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	// the first 100 visitors scroll /p/0 to 60 %, and every one /p/1 to 40 %
	// (even ones) or 80 % (odd ones): a mean of 60 % on both pages, and on
	// any sample exactly 60 % on /p/0 (500 reports, under the script's 600
	// a minute from one address)
	site := string(h.siteID)
	for v := range visitors {
		for page, depth := range []int{60, 40 + 40*(v%2)} {
			if page == 0 && v >= 100 {
				continue
			}
			body := fmt.Sprintf(`{"site_id":%q,"event_name":"engagement","url":"https://example.com/p/%d","visitor_id":"sampled-%d","scroll_depth":%d}`,
				site, page, v, depth)
			if resp := postE(t, h, body); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("%s: status %d", body, resp.StatusCode)
			}
		}
	}
	h.waitCount(visitors*perVisitor, "SELECT count() FROM events")
	h.waitCount(100+visitors, "SELECT count() FROM engagements WHERE site_id = ?", site)
	params := client.StatsParams{SiteID: string(h.siteID), DateFrom: "2026-05-01", DateTo: "2026-05-07"}

	exact, err := h.client(h.key).Overview(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if exact.Meta.Sampled || exact.Data.Metrics.Visitors != visitors || exact.Data.Metrics.Pageviews != visitors*perVisitor {
		t.Fatalf("below the threshold (20M): sampled=%v %+v, want exact %d visitors", exact.Meta.Sampled, exact.Data.Metrics, visitors)
	}

	cfg := *h.cfg
	cfg.WALDir = t.TempDir()
	cfg.SampleAboveEvents = 200 // 800 events in range: read 100/800 → a 12 % sample
	cfg.Rollups = false         // raw rows only; rollups are read whole (below)
	sampling := startApp(t, &cfg, h.clock)
	res, err := sampling.client(h.key).Overview(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Data.Metrics
	if !res.Meta.Sampled {
		t.Fatal("meta.sampled is false above the threshold")
	}
	// the sample is random per visitor: allow a generous band around the truth
	if m.Visitors < visitors/2 || m.Visitors > visitors*3/2 || m.Pageviews < m.Visitors*perVisitor-2 || m.Pageviews > m.Visitors*perVisitor+2 {
		t.Errorf("sampled estimate %+v, want about %d visitors with %d pageviews each", m, visitors, perVisitor)
	}
	if m.Visitors == visitors {
		t.Logf("the sample happened to estimate exactly")
	}
	pages, err := sampling.client(h.key).Pages(ctx, params)
	if err != nil || !pages.Meta.Sampled {
		t.Errorf("pages: sampled=%v, %v", pages.Meta.Sampled, err)
	}

	// With rollups, what reads them reads no sample: exact, and meta says
	// so; a filter no rollup holds still reads a sample of raw rows.
	cfg.WALDir, cfg.Rollups = t.TempDir(), true
	rolled := startApp(t, &cfg, h.clock).client(h.key)
	res, err = rolled.Overview(ctx, params)
	if err != nil || res.Meta.Sampled || res.Data.Metrics.Visitors != visitors || res.Data.Metrics.Pageviews != visitors*perVisitor {
		t.Errorf("overview from rollups: sampled=%v %+v, %v; want exact", res.Meta.Sampled, res.Data.Metrics, err)
	}
	pages, err = rolled.Pages(ctx, params)
	if err != nil || pages.Meta.Sampled {
		t.Errorf("pages from rollups: sampled=%v, %v", pages.Meta.Sampled, err)
	}
	filtered := params
	filtered.Pathname = "/p/0"
	if res, err = rolled.Overview(ctx, filtered); err != nil || !res.Meta.Sampled {
		t.Errorf("overview of a page: sampled=%v, %v", res.Meta.Sampled, err)
	}

	// Funnels have a threshold of their own, which applies with the other
	// reports' turned off: every visitor went /p/0 → /p/1.
	f, err := h.client(h.key).CreateFunnel(ctx, api.FunnelRequest{SiteID: string(h.siteID), Name: "p0 to p1",
		Steps: []api.FunnelStep{{Type: "pageview", PagePath: "/p/0"}, {Type: "pageview", PagePath: "/p/1"}}})
	if err != nil {
		t.Fatal(err)
	}
	fp := params
	fp.FunnelID = f.FunnelID
	cfg.WALDir, cfg.SampleAboveEvents, cfg.FunnelSampleAboveEvents = t.TempDir(), 0, 200
	funnelsApp := startApp(t, &cfg, h.clock)
	funnels := funnelsApp.client(h.key)
	rep, err := funnels.FunnelReport(ctx, fp)
	if err != nil {
		t.Fatal(err)
	}
	steps := rep.Data.Steps
	if !rep.Meta.Sampled || len(steps) != 2 || steps[0].Visitors < visitors/2 || steps[0].Visitors > visitors*3/2 ||
		steps[1].Visitors != steps[0].Visitors {
		t.Errorf("funnel above its threshold: sampled=%v %+v, want about %d visitors at both steps", rep.Meta.Sampled, steps, visitors)
	}
	if res, err = funnels.Overview(ctx, params); err != nil || res.Meta.Sampled {
		t.Errorf("overview beside the funnels' threshold: sampled=%v, %v", res.Meta.Sampled, err)
	}
	// journeys, which no rollup holds, sample as the funnel does: every
	// visitor's one session went /p/0 → /p/1 (both in one second, in the
	// order of their pages)
	paths, err := funnels.Journeys(ctx, params)
	if err != nil || !paths.Meta.Sampled || len(paths.Data.Journeys) != 1 || paths.Data.Journeys[0].Percentage != 100 ||
		strings.Join(paths.Data.Journeys[0].Pages, " ") != "/p/0 /p/1" || paths.Data.Sessions < visitors/2 ||
		paths.Data.Sessions > visitors*3/2 || paths.Data.Journeys[0].Sessions != paths.Data.Sessions {
		t.Errorf("journeys above the funnels' threshold: %+v, %v; want a sample of about %d sessions on /p/0 → /p/1", paths, err, visitors)
	}
	// browser versions, which no rollup holds either, sample as the funnel does
	browsers, err := funnels.Browsers(ctx, params)
	if err != nil || browsers.Meta.Sampled || len(browsers.Data.Browsers) != 1 || browsers.Data.Browsers[0].Browser != "Chrome" ||
		browsers.Data.Browsers[0].Visitors != visitors {
		t.Fatalf("browsers beside the funnels' threshold: %+v, %v; want one browser of %d visitors, exact", browsers, err, visitors)
	}
	bp := params
	bp.Browser = browsers.Data.Browsers[0].Browser
	versions, err := funnels.BrowserVersions(ctx, bp)
	var sum int64
	for _, v := range versions.Data.BrowserVersions {
		sum += v.Visitors
	}
	if err != nil || !versions.Meta.Sampled || sum < visitors/2 || sum > visitors*3/2 {
		t.Errorf("browser versions above the funnels' threshold: sampled=%v, %d visitors, %v; want a sample of about %d",
			versions.Meta.Sampled, sum, err, visitors)
	}
	// and so do the channels: every visitor came without a referrer,
	// Direct, 2 pageviews a visit (exact below the thresholds; on a sample
	// each count is scaled back and rounded on its own)
	for _, tc := range []struct {
		c       *client.Client
		sampled bool
	}{{h.client(h.key), false}, {funnels, true}} {
		ch, err := tc.c.Channels(ctx, params)
		if err != nil || ch.Meta.Sampled != tc.sampled || len(ch.Data.Channels) != 1 || ch.Data.Channels[0].Channel != "Direct" {
			t.Fatalf("channels (sampled %v): %+v, %v; want Direct alone", tc.sampled, ch, err)
		}
		row := ch.Data.Channels[0]
		if !tc.sampled && (row.Visitors != visitors || row.Visits != visitors || row.Pageviews != visitors*perVisitor) ||
			tc.sampled && (row.Visitors < visitors/2 || row.Visitors > visitors*3/2 || max(row.Pageviews-row.Visits*perVisitor, row.Visits*perVisitor-row.Pageviews) > 1) {
			t.Errorf("channels (sampled %v): %+v; want about %d visitors of a visit of %d pageviews each", tc.sampled, row, visitors, perVisitor)
		}
	}
	// so does retention: every visitor came on May 3, the week of Apr 27,
	// and none the week after
	ret, err := funnels.Retention(ctx, params)
	if err != nil || !ret.Meta.Sampled || len(ret.Data.Cohorts) != 2 || ret.Data.Cohorts[0].Visitors < visitors/2 ||
		ret.Data.Cohorts[0].Visitors > visitors*3/2 || ret.Data.Cohorts[0].Periods[1].Visitors != 0 || ret.Data.Cohorts[1].Visitors != 0 {
		t.Errorf("retention above the funnels' threshold: %+v, %v; want a sample of about %d visitors in the first cohort", ret, err, visitors)
	}
	// and so do the pages' scroll depths, whose mean a sample of visitors
	// keeps; the report's other figures stay exact (from the rollups here)
	depths := func(c *client.Client, p client.StatsParams) map[string]*int64 {
		t.Helper()
		return scrollDepths(t, c, p, func(pg api.Page) {
			if pg.Pageviews != visitors {
				t.Errorf("%s: %d pageviews, want %d exactly", pg.Pathname, pg.Pageviews, visitors)
			}
		})
	}
	if d := depths(h.client(h.key), params); len(d) != 2 || d["/p/0"] == nil || *d["/p/0"] != 60 || d["/p/1"] == nil || *d["/p/1"] != 60 {
		t.Errorf("scroll depths below the thresholds: %v, want 60 and 60", d)
	}
	chrome := params
	chrome.Browser = "Chrome" // every visitor's: the filtered query keeps them all
	for _, p := range []client.StatsParams{params, chrome} {
		d := depths(funnels, p)
		if d["/p/1"] != nil {
			t.Logf("sampled scroll depth of /p/1 (browser %q): %d %%", p.Browser, *d["/p/1"])
		}
		// about 100 sampled visitors of 40 % or 80 %: their mean is within 5
		// standard deviations (2 points) of 60 %
		if len(d) != 2 || d["/p/0"] == nil || *d["/p/0"] != 60 || d["/p/1"] == nil || *d["/p/1"] < 50 || *d["/p/1"] > 70 {
			t.Errorf("scroll depths above the funnels' threshold (browser %q): %v, want 60 and about 60", p.Browser, d)
		}
	}
	// the dashboard's card says so (a login needs the clock near Postgres's)
	h.clock.Set(time.Now().UTC())
	w := newWebUser(t, funnelsApp)
	w.login(h.email)
	card := w.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/cards/funnels?range=custom&from=2026-05-01&to=2026-05-07",
		nil, http.StatusOK)
	if !strings.Contains(card, `data-metric="sampled"`) {
		t.Errorf("the funnel card does not say it is sampled:\n%.2000s", card)
	}
	// below it, exact
	cfg.WALDir, cfg.FunnelSampleAboveEvents = t.TempDir(), 1000
	below := startApp(t, &cfg, h.clock).client(h.key)
	if paths, err = below.Journeys(ctx, params); err != nil || paths.Meta.Sampled || paths.Data.Sessions != visitors ||
		paths.Data.Visitors != visitors || len(paths.Data.Journeys) != 1 || paths.Data.Journeys[0].Sessions != visitors {
		t.Errorf("journeys below the funnels' threshold: %+v, %v; want %d sessions and visitors, exact", paths, err, visitors)
	}
	rep, err = below.FunnelReport(ctx, fp)
	if err != nil || rep.Meta.Sampled || len(rep.Data.Steps) != 2 || rep.Data.Steps[0].Visitors != visitors ||
		rep.Data.Steps[1].Visitors != visitors {
		t.Errorf("funnel below its threshold: sampled=%v %+v, %v; want %d visitors at both steps", rep.Meta.Sampled, rep.Data.Steps,
			err, visitors)
	}
	if ret, err = below.Retention(ctx, params); err != nil || ret.Meta.Sampled || ret.Data.Cohorts[0].Visitors != visitors {
		t.Errorf("retention below the funnels' threshold: %+v, %v; want %d visitors exactly", ret, err, visitors)
	}
}
