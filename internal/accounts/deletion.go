package accounts

import (
	"context"
	"log/slog"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// DeletionQueue is the Postgres queue of deleted sites.
type DeletionQueue interface {
	PendingDeletions(ctx context.Context) ([]model.SiteDeletion, error)
	FinishDeletion(ctx context.Context, site model.SiteID) error
}

// SiteData is a place holding sites' data (ClickHouse, Redis). It removes
// the data of several sites at once: ClickHouse rewrites a table's parts
// for a deletion whatever the number of sites it names.
type SiteData interface {
	DeleteSites(ctx context.Context, sites []model.SiteID) error
}

// Deleter removes the data of deleted sites in the background. It repeats
// each removal until the deletion is older than Settle: an instance may
// accept events for a site for a few seconds after its deletion (its site
// cache and write buffer), and those must go too.
type Deleter struct {
	queue  DeletionQueue
	places []SiteData
	now    func() time.Time
	log    *slog.Logger
	Settle time.Duration
}

// NewDeleter removes deleted sites' data from places.
func NewDeleter(queue DeletionQueue, now func() time.Time, log *slog.Logger, places ...SiteData) *Deleter {
	return &Deleter{queue: queue, places: places, now: now, log: log, Settle: 2 * time.Minute}
}

// Run works the queue every interval until ctx ends.
func (d *Deleter) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("site deletion: will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maxSitesPerPass bounds the sites one pass of the deleter removes.
const maxSitesPerPass = 1000

// Pass removes the data of every pending deletion once, all sites
// together in each place (so a pass costs ClickHouse at most one mutation
// of each table, however many sites were deleted), and finishes those
// older than Settle.
func (d *Deleter) Pass(ctx context.Context) error {
	pending, err := d.queue.PendingDeletions(ctx)
	if err != nil || len(pending) == 0 {
		return err
	}
	// the oldest first, a bounded number a pass: the mutations' conditions
	// name them all (a site's id and its hash, some 50 bytes, against
	// ClickHouse's 256 KiB a query); the rest are the next pass's
	pending = pending[:min(len(pending), maxSitesPerPass)]
	sites := make([]model.SiteID, len(pending))
	for i, del := range pending {
		sites[i] = del.SiteID
	}
	for _, p := range d.places {
		if err := p.DeleteSites(ctx, sites); err != nil {
			return err
		}
	}
	for _, del := range pending {
		if d.now().Sub(del.RequestedAt) >= d.Settle {
			if err := d.queue.FinishDeletion(ctx, del.SiteID); err != nil {
				return err
			}
			d.log.Info("site deletion: done", "site_id", del.SiteID)
		}
	}
	return nil
}
