package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/demo"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/revenue"
)

// demoRun is one "tally demo --events N".
type demoRun struct {
	opts            demo.Options
	site            string
	ifEmpty, asJSON bool
}

func (d demoRun) load(ctx context.Context, e *env, stderr io.Writer) error {
	pg, err := e.postgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Close()
	site, err := demoTarget(ctx, pg, d.site)
	if err != nil {
		return err
	}
	ch, err := e.clickhouse(ctx)
	if err != nil {
		return err
	}
	defer ch.Close()
	if d.ifEmpty {
		if n, err := siteEvents(ctx, ch, site.ID); err != nil || n > 0 {
			if err != nil {
				return err
			}
			return e.print(d.asJSON, map[string]any{"site_id": site.ID, "skipped": true, "existing_events": n},
				fmt.Sprintf("demo: site %s already has %d events; nothing loaded (add more with `tally demo --events N`)", site.ID, n))
		}
	}
	rdb, err := app.NewRedis(e.cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	stores := demo.Stores{Events: ch, Goals: pg, Rates: pg,
		Realtime: demo.RealtimeFunc(func(ctx context.Context, site model.SiteID, vs []realtime.Active) error {
			return realtime.Mark(ctx, rdb, e.cfg.RedisPrefix, site, vs)
		})}
	if d.opts.MaxPayments > 0 {
		stores.Visits = demo.NewVisits(ch)
		stores.Payments = revenue.NewService(pg, stores.Visits, nil, time.Now, e.log)
	}
	opts := d.opts
	opts.Site, opts.BaseCurrency, opts.Hostname, opts.End = site.ID, site.BaseCurrency, site.Domain, time.Now()
	started := time.Now()
	opts.Progress = func(stage string, done, total int) {
		fmt.Fprintf(stderr, "\rdemo: %s %d of %d (%.0f%%), %s ", stage, done, total, 100*float64(done)/float64(max(total, 1)),
			time.Since(started).Round(100*time.Millisecond))
		if done >= total {
			fmt.Fprintln(stderr)
		}
	}
	res, err := demo.Load(ctx, stores, opts)
	if err != nil {
		fmt.Fprintln(stderr)
		return err
	}
	// the events are of past days: the views wrote their visitor blocks of
	// every level, which reports read once they are recorded as built
	fmt.Fprintf(stderr, "demo: building the visitor blocks of the days that have closed ...")
	building := time.Now()
	if _, err := ch.BuildClosedBlocks(ctx); err != nil {
		fmt.Fprintln(stderr)
		return err
	}
	fmt.Fprintf(stderr, " %s\n", time.Since(building).Round(100*time.Millisecond))
	took := time.Since(started)
	return e.print(d.asJSON, map[string]any{"site_id": site.ID, "days": opts.Days, "seed": opts.Seed,
		"seconds": took.Seconds(), "result": res}, demoSummary(site.ID, opts.Days, took, res))
}

// demoTarget is the site to load: the one named, else the demo site.
func demoTarget(ctx context.Context, pg *pgstore.Store, id string) (model.Site, error) {
	if id != "" {
		site, err := pg.SiteByID(ctx, model.SiteID(id))
		if errors.Is(err, errs.ErrNotFound) {
			return site, fmt.Errorf("no site %s", id)
		}
		return site, err
	}
	user, err := pg.UserByEmail(ctx, demoEmail)
	if err != nil && !errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, err
	}
	var sites []model.Site
	if err == nil {
		if sites, err = pg.SitesByUser(ctx, user.ID); err != nil {
			return model.Site{}, err
		}
	}
	if len(sites) == 0 {
		return model.Site{}, errors.New("no demo site: run `tally demo setup` or pass --site")
	}
	return sites[0], nil
}

// siteEvents counts the events a site has.
func siteEvents(ctx context.Context, ch *chstore.Store, site model.SiteID) (uint64, error) {
	var n uint64
	err := ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_key = cityHash64(?) AND site_id = ?",
		string(site), string(site)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the site's events: %w", err)
	}
	return n, nil
}

func demoSummary(site model.SiteID, days int, took time.Duration, res demo.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "loaded %d events (%d sessions of %d visitors) over %d days into site %s in %s\n",
		res.Events, res.Sessions, res.Visitors, days, site, took.Round(100*time.Millisecond))
	total := 0
	var byProvider []string
	for _, p := range slices.Sorted(maps.Keys(res.Payments)) {
		total += res.Payments[p]
		byProvider = append(byProvider, fmt.Sprintf("%s %d", p, res.Payments[p]))
	}
	if total+res.Refunds+res.Failed > 0 {
		fmt.Fprintf(&b, "payments: %d (%s; %d renewals), %d refunds, %d failed attempts, in %s; %d unattributed",
			total, strings.Join(byProvider, ", "), res.Renewals, res.Refunds, res.Failed, strings.Join(res.Currencies, ", "),
			res.Unattributed)
		if recorded := total + res.Refunds + res.Failed; recorded < res.Planned {
			fmt.Fprintf(&b, " (a sample: %d of %d; see --payments)", recorded, res.Planned)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "goals created: %d; exchange rates stored: %d; visitors on the site now: %d", res.Goals, res.Rates, res.Active)
	return b.String()
}
