package demo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// siteGoals are the demo site's goals: the funnel's steps, docs readers and
// downloads.
var siteGoals = []model.Goal{
	{Name: "Signed up", Type: model.GoalCustomEvent, EventName: "signup"},
	{Name: "Started checkout", Type: model.GoalCustomEvent, EventName: "checkout_started"},
	{Name: "Bought", Type: model.GoalPageview, PagePath: pathSuccess},
	{Name: "Read the docs", Type: model.GoalPageview, PagePath: "/docs/**"},
	{Name: "Downloaded", Type: model.GoalCustomEvent, EventName: "download"},
}

// ensureGoals creates the goals the site does not have yet and returns how
// many it created.
func ensureGoals(ctx context.Context, store GoalStore, site model.SiteID) (int, error) {
	have, err := store.GoalsBySite(ctx, site)
	if err != nil {
		return 0, fmt.Errorf("demo: goals: %w", err)
	}
	target := func(g model.Goal) string { return string(g.Type) + " " + g.PagePath + g.EventName }
	exists := map[string]bool{}
	for _, g := range have {
		exists[target(g)] = true
	}
	created := 0
	for _, g := range siteGoals {
		if exists[target(g)] {
			continue
		}
		g.SiteID = site
		_, err := store.CreateGoal(ctx, g)
		if errors.Is(err, errs.ErrConflict) { // created meanwhile, or a name taken
			continue
		}
		if err != nil {
			return created, fmt.Errorf("demo: create goal %q: %w", g.Name, err)
		}
		created++
	}
	return created, nil
}

// referenceRates are approximate ECB reference rates (units per 1 EUR) of
// the currencies the demo's customers pay in and common base currencies.
var referenceRates = map[string]float64{"USD": 1.16, "GBP": 0.87, "JPY": 178, "CAD": 1.62, "AUD": 1.77,
	"CHF": 0.93, "SEK": 10.9, "PLN": 4.24, "INR": 102, "BRL": 6.2}

// ensureRates stores a rate for each weekday from from to to (as the ECB
// publishes them) of each currency that has none on that day, so that the
// demo's payments convert into the base currency. Rates already stored are
// never replaced. It returns how many rates it stored.
func ensureRates(ctx context.Context, store Rates, currencies []string, from, to time.Time) (int, error) {
	var missing []model.Rate
	for _, cur := range currencies {
		ref, ok := referenceRates[cur]
		if !ok {
			continue // payments in it wait for a real rate
		}
		for day := from.Truncate(24 * time.Hour); !day.After(to); day = day.Add(24 * time.Hour) {
			if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
				continue
			}
			_, on, _, err := store.RateOn(ctx, cur, day)
			if err == nil && on.Equal(day) {
				continue
			}
			if err != nil && !errors.Is(err, errs.ErrNotFound) {
				return 0, fmt.Errorf("demo: rates: %w", err)
			}
			missing = append(missing, model.Rate{Currency: cur, Day: day, Rate: dailyRate(cur, ref, day)})
		}
	}
	if len(missing) == 0 {
		return 0, nil
	}
	if err := store.UpsertRates(ctx, missing); err != nil {
		return 0, fmt.Errorf("demo: rates: %w", err)
	}
	return len(missing), nil
}

// dailyRate moves a reference rate by up to ±1.5 % from day to day, the
// same for a day whatever the seed.
func dailyRate(cur string, ref float64, day time.Time) string {
	h := fnv.New64a()
	h.Write([]byte(cur + day.Format(time.DateOnly)))
	x := float64(h.Sum64()%10_000)/10_000*2 - 1
	v := ref * (1 + 0.015*x)
	digits := max(0, 4-int(math.Floor(math.Log10(v)))) // five significant figures, as the ECB gives them
	return strconv.FormatFloat(v, 'f', digits, 64)
}
