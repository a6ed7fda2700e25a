// Package demo generates the traffic of a realistic site and loads it, for
// demos and benchmarks: a pool of visitors who keep their device, browser,
// system and place and come back over the days; sources with their own
// timing (a launch spike, a weekly newsletter, a paid campaign), landing
// pages and behaviour; pages with their own reading time and bounce rate; a
// funnel from pricing to sign-up to checkout; custom events with props;
// goals; and the payments of the checkouts — new subscriptions, renewals of
// older ones, one-time purchases, failed attempts and refunds from the four
// payment providers, in the customers' currencies; and the bots a site
// filters out.
//
// Events and sessions go straight into ClickHouse in large batches; the
// payments go through the revenue service, which attributes them to the
// visitors' sessions and converts them, as it does a provider's webhook.
// The same seed and end time give the same traffic.
package demo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/revenue"
)

// Sink stores generated rows (the ClickHouse store).
type Sink interface {
	InsertEvents(ctx context.Context, id string, rows []model.EventRow) error
	InsertSessions(ctx context.Context, id string, rows []model.SessionRow) error
	InsertBotEvents(ctx context.Context, id string, rows []model.BotEventRow) error
	InsertEngagements(ctx context.Context, id string, rows []model.EngagementRow) error
}

// Payments records payments (the revenue service).
type Payments interface {
	Record(ctx context.Context, in revenue.Incoming) (revenue.Recorded, error)
	Export(ctx context.Context) (int, error)
}

// GoalStore keeps goals (the Postgres store).
type GoalStore interface {
	GoalsBySite(ctx context.Context, site model.SiteID) ([]model.Goal, error)
	CreateGoal(ctx context.Context, g model.Goal) (model.Goal, error)
}

// Rates keeps exchange rates (the Postgres store).
type Rates interface {
	RateOn(ctx context.Context, currency string, day time.Time) (string, time.Time, bool, error)
	UpsertRates(ctx context.Context, rates []model.Rate) error
}

// Realtime shows visitors as on the site now (realtime.Mark on Redis).
type Realtime interface {
	Mark(ctx context.Context, site model.SiteID, visitors []realtime.Active) error
}

// RealtimeFunc is a function that marks visitors as on the site now.
type RealtimeFunc func(ctx context.Context, site model.SiteID, visitors []realtime.Active) error

// Mark calls f.
func (f RealtimeFunc) Mark(ctx context.Context, site model.SiteID, visitors []realtime.Active) error {
	return f(ctx, site, visitors)
}

// Stores are where a load writes. Events is required; without one of the
// others, that part of the demo is left out.
type Stores struct {
	Events   Sink
	Payments Payments
	// Visits, when it is the warehouse of the Payments service, learns the
	// sessions of the load's paying visitors, so that attributing their
	// payments reads them from memory instead of querying ClickHouse.
	Visits   *Visits
	Goals    GoalStore
	Rates    Rates
	Realtime Realtime
}

// Options describe the traffic to generate.
type Options struct {
	Site model.SiteID
	// BaseCurrency is the site's base currency, which payments are
	// converted into (default USD).
	BaseCurrency string
	// Hostname is the site's host on every event (default example.com).
	Hostname string
	Events   int // approximate number of events (pageviews + custom events)
	// End is when the traffic ends (default now); it starts at the first
	// midnight (UTC) of the Days days (default 30) before End.
	End  time.Time
	Days int
	Seed uint64
	// Batch is the number of events per insert (default 100,000).
	Batch int
	// MaxPayments caps the payments, renewals, failed attempts and refunds
	// recorded (0: all): past it, a random sample of whole payments (each
	// with its refund) is recorded.
	MaxPayments int
	// Progress is called as work goes on: stage "events" after each batch,
	// "payments" every hundred payments.
	Progress func(stage string, done, total int)
}

// Result says what a load wrote.
type Result struct {
	Events    int `json:"events"`
	Sessions  int `json:"sessions"`
	Visitors  int `json:"visitors"`
	BotEvents int `json:"bot_events"` // filtered out, counted by category
	// Engagements are the scroll depths the pages' visitors reported.
	Engagements int `json:"engagements"`

	// Payments counts payments (renewals included) by provider.
	Payments     map[string]int `json:"payments"`
	Renewals     int            `json:"renewals"`
	Refunds      int            `json:"refunds"`
	Failed       int            `json:"failed"`
	Unattributed int            `json:"unattributed"` // payments and refunds without a visit to attribute them to
	Planned      int            `json:"planned"`      // payments, failed attempts and refunds the traffic led to
	Currencies   []string       `json:"currencies"`
	Goals        int            `json:"goals_created"`
	Rates        int            `json:"rates_stored"`
	Active       int            `json:"active_now"`
}

func (o *Options) defaults() {
	if o.Days <= 0 {
		o.Days = 30
	}
	if o.Batch <= 0 {
		o.Batch = 100_000
	}
	if o.End.IsZero() {
		o.End = time.Now()
	}
	o.End = o.End.UTC().Truncate(time.Second)
	if o.BaseCurrency == "" {
		o.BaseCurrency = "USD"
	}
	if o.Hostname == "" {
		o.Hostname = "example.com"
	}
}

// Generate writes about opts.Events events with their sessions (and bot events), without
// goals or payments (the benchmarks' load).
func Generate(ctx context.Context, sink Sink, opts Options) (Result, error) {
	return Load(ctx, Stores{Events: sink}, opts)
}

// Load writes the demo: the site's goals, about opts.Events events with
// their sessions, the payments they led to (with the exchange rates that
// convert them), and the visitors of the last minutes as on the site now.
func Load(ctx context.Context, st Stores, opts Options) (Result, error) {
	opts.defaults()
	g, err := newGenerator(opts, st.Events, st.Payments != nil, st.Visits)
	if err != nil {
		return Result{}, err
	}
	res := &g.res
	res.Payments = map[string]int{}
	if st.Goals != nil {
		if res.Goals, err = ensureGoals(ctx, st.Goals, opts.Site); err != nil {
			return *res, err
		}
	}
	if err := g.run(ctx); err != nil {
		return *res, err
	}
	if g.plan != nil {
		charges := g.plan.selected(opts.MaxPayments)
		for _, c := range g.plan.chains {
			res.Planned += len(c)
		}
		if st.Rates != nil {
			currencies := []string{opts.BaseCurrency}
			for _, c := range charges {
				if !slices.Contains(currencies, c.currency) {
					currencies = append(currencies, c.currency)
				}
			}
			if res.Rates, err = ensureRates(ctx, st.Rates, currencies, g.start.Add(-7*24*time.Hour), g.end); err != nil {
				return *res, err
			}
		}
		if st.Visits != nil {
			for _, vid := range g.plan.silent {
				st.Visits.remember(opts.Site, ingest.FromClientID(opts.Site, vid), nil)
			}
		}
		site := model.Site{ID: opts.Site, BaseCurrency: opts.BaseCurrency}
		if err := record(ctx, st.Payments, site, charges, res, opts.Progress); err != nil {
			return *res, err
		}
	}
	if st.Realtime != nil && len(g.active) > 0 {
		active := make([]realtime.Active, 0, len(g.active))
		for _, a := range g.active {
			active = append(active, a)
		}
		slices.SortFunc(active, func(a, b realtime.Active) int { return a.Seen.Compare(b.Seen) })
		if err := st.Realtime.Mark(ctx, opts.Site, active); err != nil {
			return *res, fmt.Errorf("demo: realtime: %w", err)
		}
		res.Active = len(active)
	}
	return *res, nil
}
