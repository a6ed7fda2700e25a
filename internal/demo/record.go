package demo

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue"
)

// recordWorkers is how many payments are recorded at once.
const recordWorkers = 8

// selected is the plan's charges, at most max (0: all) in whole chains
// drawn at random, so a large load records a sample of its payments.
func (pl *plan) selected(max int) []charge {
	chains := pl.chains
	total := 0
	for _, c := range chains {
		total += len(c)
	}
	if max > 0 && total > max {
		chains = slices.Clone(chains)
		pl.r.Shuffle(len(chains), func(i, j int) { chains[i], chains[j] = chains[j], chains[i] })
	}
	var out []charge
	for _, c := range chains {
		if max > 0 && len(out)+len(c) > max {
			continue
		}
		out = append(out, c...)
	}
	return out
}

// record records the charges through the revenue service, payments before
// the refunds that name them, and exports them to ClickHouse.
func record(ctx context.Context, svc Payments, site model.Site, charges []charge, res *Result,
	progress func(stage string, done, total int)) error {
	var payments, refunds []charge
	for _, c := range charges {
		if c.kind == model.KindRefund {
			refunds = append(refunds, c)
		} else {
			payments = append(payments, c)
		}
	}
	var mu sync.Mutex
	var done atomic.Int64
	count := func(c charge, rec revenue.Recorded) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case c.kind == model.KindRefund:
			res.Refunds++
		case c.kind == model.KindFailed:
			res.Failed++
		default:
			res.Payments[string(c.provider)]++
			if c.renewal {
				res.Renewals++
			}
		}
		if rec.Payment.Attribution == nil && c.kind != model.KindFailed {
			res.Unattributed++
		}
		if !slices.Contains(res.Currencies, c.currency) {
			res.Currencies = append(res.Currencies, c.currency)
		}
		if n := int(done.Add(1)); progress != nil && (n%100 == 0 || n == len(charges)) {
			progress("payments", n, len(charges))
		}
	}
	for _, batch := range [][]charge{payments, refunds} {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(recordWorkers)
		for _, c := range batch {
			g.Go(func() error {
				rec, err := svc.Record(gctx, c.incoming(site))
				if err != nil {
					return fmt.Errorf("demo: record a %s of %s: %w", c.kind, c.provider, err)
				}
				count(c, rec)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	slices.Sort(res.Currencies)
	if _, err := svc.Export(ctx); err != nil {
		return fmt.Errorf("demo: export payments: %w", err)
	}
	return nil
}
