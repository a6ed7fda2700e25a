package demo_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/demo"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/pgstore"
	"github.com/tally-analytics/tally/internal/realtime"
	"github.com/tally-analytics/tally/internal/revenue"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/internal/testenv"
)

// The demo loaded into the real stores: goals, traffic, payments recorded
// through the revenue service (attributed to the visitors' sessions,
// converted into the site's base currency at the rates the load stored,
// exported to ClickHouse), and the visitors of the last minutes in Redis.
func TestLoadIntoTheStores(t *testing.T) {
	ctx := context.Background()
	ch, _ := testenv.ClickHouse(t)
	pg, err := pgstore.Open(ctx, testenv.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	rdb, prefix := testenv.Redis(t)
	user, err := pg.CreateUser(ctx, model.User{Email: "owner@example.com", Name: "Owner", PasswordHash: "-", Plan: model.PlanPro})
	if err != nil {
		t.Fatal(err)
	}
	st, err := pg.CreateSite(ctx, model.Site{ID: site, Domain: "shop.example.org", Timezone: "UTC", BaseCurrency: "EUR"}, user.ID)
	if err != nil {
		t.Fatal(err)
	}
	visits := demo.NewVisits(ch)
	stores := demo.Stores{Events: ch, Goals: pg, Rates: pg, Visits: visits,
		Payments: revenue.NewService(pg, visits, nil, time.Now, testenv.Logger(t)),
		Realtime: demo.RealtimeFunc(func(ctx context.Context, s model.SiteID, vs []realtime.Active) error {
			return realtime.Mark(ctx, rdb, prefix, s, vs)
		})}
	now := time.Now().UTC()
	opts := demo.Options{Site: st.ID, BaseCurrency: st.BaseCurrency, Hostname: st.Domain, Events: 40_000, Seed: 4, End: now}
	res, err := demo.Load(ctx, stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)

	count := func(query string) uint64 {
		t.Helper()
		var n uint64
		if err := ch.QueryRow(ctx, query, string(site)).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	if n := count("SELECT count() FROM events WHERE site_id = ?"); n != uint64(res.Events) {
		t.Errorf("ClickHouse has %d events, the load says %d", n, res.Events)
	}
	if n := count(`SELECT count() FROM (SELECT visitor_id FROM sessions WHERE site_id = ? GROUP BY visitor_id
		HAVING uniqExact(device, browser, os, country_code, region_code, city) > 1)`); n != 0 {
		t.Errorf("%d visitors changed device, browser, system or place between visits", n)
	}
	if n := count(`SELECT count() FROM (SELECT visitor_id FROM sessions WHERE site_id = ? GROUP BY visitor_id
		HAVING uniqExact(toDate(started_at)) > 1)`); n < uint64(res.Visitors/20) {
		t.Errorf("%d of %d visitors came back on another day", n, res.Visitors)
	}

	checkPayments(t, ch)
	checkVisits(t, ch, visits, now)
	statsSvc := stats.NewService(ch, siteOwner{st}, pg, pg, realtime.NewReader(rdb, prefix), stats.Options{}, time.Now,
		testenv.Logger(t))
	checkReports(t, statsSvc, user.ID, now)

	goals, err := pg.GoalsBySite(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	if len(goals) != wantGoals || res.Goals != wantGoals {
		t.Errorf("the site has %d goals, the load created %d; want %d", len(goals), res.Goals, wantGoals)
	}
	// read at the load's own "now": a visitor the load saw 4:58 before it
	// has left the 5-minute window by the time a slow run gets here
	snap, err := realtime.NewReader(rdb, prefix).Active(ctx, site, now)
	if err != nil {
		t.Fatal(err)
	}
	if int(snap.Visitors) != res.Active {
		t.Errorf("realtime shows %d visitors, the load marked %d", snap.Visitors, res.Active)
	}

	// a second load adds traffic, not goals or rates
	again, err := demo.Load(ctx, stores, demo.Options{Site: st.ID, BaseCurrency: "EUR", Events: 1000, Seed: 5, End: now})
	if err != nil {
		t.Fatal(err)
	}
	if again.Goals != 0 || again.Rates != 0 {
		t.Errorf("a second load created %d goals and stored %d rates, want none", again.Goals, again.Rates)
	}
}

// siteOwner answers the stats service's site lookups: the test's user owns
// the site.
type siteOwner struct{ site model.Site }

func (o siteOwner) Check(_ context.Context, _ auth.Principal, id model.SiteID, _ accounts.Action) (model.Site, model.Role, error) {
	if id != o.site.ID {
		return model.Site{}, "", errs.E(errs.NotFound, "site_not_found", "site not found")
	}
	return o.site, model.RoleOwner, nil
}

// checkReports reads the demo through the stats service, as the dashboard
// does: revenue with refunds by every breakdown, and every goal converting.
func checkReports(t *testing.T, svc *stats.Service, user model.UserID, end time.Time) {
	t.Helper()
	ctx := context.Background()
	p := auth.Principal{UserID: user, Scopes: []model.Scope{model.ScopeStatsRead}}
	day := end.Truncate(24 * time.Hour)
	r := stats.Request{SiteID: site, DateFrom: day.AddDate(0, 0, -29), DateTo: day, Attribution: stats.LastNonDirect}
	for _, breakdown := range []string{"source", "page", "campaign", "country", "device"} {
		r.Breakdown = breakdown
		res, err := svc.Revenue(ctx, p, r)
		if err != nil {
			t.Fatalf("revenue by %s: %v", breakdown, err)
		}
		tot := res.Totals
		if tot.Revenue <= 0 || tot.Refunds <= 0 || tot.RefundCount == 0 || tot.PayingVisitors == 0 || res.Currency != "EUR" {
			t.Errorf("revenue by %s: totals %+v in %s", breakdown, tot, res.Currency)
		}
		attributed := 0
		for _, row := range res.Breakdown {
			if row.Value != stats.UnattributedLabel && row.Value != stats.NoneLabel && row.Revenue > 0 {
				attributed++
			}
		}
		if attributed < 2 {
			t.Errorf("revenue by %s: %d values with attributed revenue (%+v)", breakdown, attributed, res.Breakdown)
		}
	}
	conv, err := svc.Conversions(ctx, p, stats.Request{SiteID: site, DateFrom: day.AddDate(0, 0, -29), DateTo: day})
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Goals) != wantGoals {
		t.Errorf("%d goals in the conversions report, want %d", len(conv.Goals), wantGoals)
	}
	for _, g := range conv.Goals {
		if g.Completions == 0 {
			t.Errorf("goal %q has no conversions", g.Goal.Name)
		}
	}
}

// checkVisits checks that the sessions the load kept for its paying
// visitors are those ClickHouse returns for them.
func checkVisits(t *testing.T, ch *chstore.Store, visits *demo.Visits, now time.Time) {
	t.Helper()
	ctx := context.Background()
	res, err := ch.Rows(ctx, `SELECT toString(visitor_id), toFloat64(count()) FROM payments
		WHERE site_id = ? AND attributed = 1 GROUP BY visitor_id ORDER BY visitor_id LIMIT 40`, []any{string(site)}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) < 20 {
		t.Fatalf("%d paying visitors with attributed payments", len(res.Rows))
	}
	from := now.Add(-revenue.AttributionWindow)
	for _, row := range res.Rows {
		visitor, err := strconv.ParseUint(row.Dims[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ch.VisitorSessions(ctx, site, visitor, from, now)
		if err != nil {
			t.Fatal(err)
		}
		got, err := visits.VisitorSessions(ctx, site, visitor, from, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Errorf("visitor %d paid, attributed, but has no sessions in ClickHouse", visitor)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("sessions of visitor %d (-ClickHouse +kept by the load):\n%s", visitor, diff)
		}
	}
}

// checkPayments checks the payments ClickHouse got from the ledger: every
// provider, refunds, a failed attempt left out, several currencies, all
// converted into the base currency.
func checkPayments(t *testing.T, ch *chstore.Store) {
	t.Helper()
	res, err := ch.Rows(context.Background(), `SELECT provider, kind, currency, base_currency,
		toFloat64(count()), toFloat64(countIf(base_amount <= 0))
		FROM payments WHERE site_id = ? GROUP BY provider, kind, currency, base_currency`, []any{string(site)}, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	providers, kinds, currencies := map[string]bool{}, map[string]float64{}, map[string]bool{}
	for _, row := range res.Rows {
		providers[row.Dims[0]], currencies[row.Dims[2]] = true, true
		kinds[row.Dims[1]] += row.Metrics[0]
		if row.Dims[3] != "EUR" || row.Metrics[1] > 0 {
			t.Errorf("payments %v: %v not converted into EUR", row.Dims, row.Metrics[1])
		}
	}
	if len(providers) != 4 || kinds[string(model.KindRefund)] == 0 || len(currencies) < 3 {
		t.Errorf("payments from %v, kinds %v, in %v", providers, kinds, currencies)
	}
}

// wantGoals is how many goals a load creates on a site without any.
const wantGoals = 5
