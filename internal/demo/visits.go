package demo

import (
	"context"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue"
)

// Visits is the ClickHouse side of the revenue service for a load: it
// answers the attribution's question — the sessions of a paying visitor —
// from the sessions the load generated for that visitor (the rows it has
// just written), and passes everything else to the warehouse. Attribution
// then costs no ClickHouse query per payment, which keeps large loads fast.
type Visits struct {
	revenue.Warehouse
	mu    sync.RWMutex
	site  model.SiteID
	known map[uint64][]model.SessionTouch // by visitor, oldest first; nil for a visitor who never came
}

// NewVisits wraps the warehouse of the revenue service.
func NewVisits(w revenue.Warehouse) *Visits {
	return &Visits{Warehouse: w, known: map[uint64][]model.SessionTouch{}}
}

// VisitorSessions lists a visitor's sessions that started in [from, to],
// oldest first, as the warehouse would.
func (v *Visits) VisitorSessions(ctx context.Context, site model.SiteID, visitor uint64, from, to time.Time) ([]model.SessionTouch, error) {
	v.mu.RLock()
	touches, ok := v.known[visitor]
	ok = ok && site == v.site
	v.mu.RUnlock()
	if !ok {
		return v.Warehouse.VisitorSessions(ctx, site, visitor, from, to)
	}
	var out []model.SessionTouch
	for _, t := range touches {
		if !t.Start.Before(from) && !t.Start.After(to) {
			out = append(out, t)
		}
	}
	return out, nil
}

// remember keeps the sessions of a visitor of the load's site.
func (v *Visits) remember(site model.SiteID, visitor uint64, touches []model.SessionTouch) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.site = site
	v.known[visitor] = touches
}
