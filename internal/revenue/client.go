package revenue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// CheckClientRevenue holds revenue the tracking script reports to the
// site's policy (model.ClientRevenue): refused when the site takes none, or
// when the amount, converted into the base currency at the latest known
// rate, is above the site's cap.
func (s *Service) CheckClientRevenue(ctx context.Context, site model.Site, amount int64, currency string) error {
	cap := site.ClientRevenue.Cap
	if cap <= 0 {
		return errs.InvalidField("revenue", "this site takes no revenue from the tracking script")
	}
	base, ok, err := s.estimate(ctx, amount, currency, site.BaseCurrency)
	if err != nil {
		return errs.E(errs.Unavailable, "service_unavailable", "cannot check the revenue now").Wrap(err)
	}
	if !ok {
		return errs.InvalidField("revenue.currency", "no exchange rate from %s to %s is known to check the site's cap", currency, site.BaseCurrency)
	}
	if base > cap {
		return errs.InvalidField("revenue.amount", "above the site's cap for revenue from the tracking script (%s)",
			money.Format(cap, site.BaseCurrency))
	}
	return nil
}

// PurgeClientRevenue deletes every payment the tracking script reported to
// a site, from the ledger and the reports (owners and admins, with the
// sites:manage scope), and says how many went. The events that carried it
// stay in the Events report.
func (s *Service) PurgeClientRevenue(ctx context.Context, sites Sites, p auth.Principal, id model.SiteID) (int64, error) {
	if _, _, err := sites.Check(ctx, p, id, accounts.ManageRevenue); err != nil {
		return 0, err
	}
	n, err := s.ledger.DeletePayments(ctx, id, model.ProviderTracker)
	if err != nil {
		return 0, fmt.Errorf("revenue: purge client revenue: %w", err)
	}
	// After the ledger: a row exported meanwhile is deleted here too.
	if err := s.warehouse.DeletePayments(ctx, id, model.ProviderTracker); err != nil {
		return n, fmt.Errorf("revenue: purge client revenue: %w", err)
	}
	return n, nil
}

// estimate converts amount at the latest rates known, however old; ok is
// false when a currency has none.
func (s *Service) estimate(ctx context.Context, amount int64, from, to string) (int64, bool, error) {
	if from == to {
		return amount, true, nil
	}
	rates := [2]string{}
	for i, cur := range []string{from, to} {
		rate, ok, err := s.latestRate(ctx, cur)
		if err != nil || !ok {
			return 0, ok, err
		}
		rates[i] = rate
	}
	base, _, err := money.Convert(amount, from, to, rates[0], rates[1])
	if err != nil {
		return 0, false, fmt.Errorf("revenue: estimate: %w", err)
	}
	return base, true, nil
}

// rateTTL is how long a latest rate is reused: the ECB publishes once a day.
const rateTTL = time.Hour

// rateCache keeps the latest rate per currency.
type rateCache struct {
	mu    sync.Mutex
	rates map[string]cachedRate
}

type cachedRate struct {
	rate    string // "" when the currency has none
	fetched time.Time
}

// latestRate is the latest EUR rate of cur, from the cache or the ledger.
func (s *Service) latestRate(ctx context.Context, cur string) (string, bool, error) {
	if cur == "EUR" {
		return "1", true, nil
	}
	now := s.now()
	s.rates.mu.Lock()
	c, ok := s.rates.rates[cur]
	s.rates.mu.Unlock()
	if ok && now.Sub(c.fetched) < rateTTL {
		return c.rate, c.rate != "", nil
	}
	rate, err := s.ledger.LatestRate(ctx, cur, now)
	if err != nil && !errors.Is(err, errs.ErrNotFound) {
		return "", false, fmt.Errorf("revenue: rate of %s: %w", cur, err)
	}
	s.rates.mu.Lock()
	if s.rates.rates == nil {
		s.rates.rates = map[string]cachedRate{}
	}
	s.rates.rates[cur] = cachedRate{rate: rate, fetched: now}
	s.rates.mu.Unlock()
	return rate, rate != "", nil
}
