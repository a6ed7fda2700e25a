package ingest

import (
	"context"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// MaxBatch is the number of events one batch request may carry.
const MaxBatch = 1000

// Result is the outcome of one event of a batch: its id, or why it was refused.
type Result struct {
	EventID string
	Err     error
}

// TrackBatch accepts up to MaxBatch events from an authenticated caller and
// returns one result per event, in order. Each event is validated and
// authorised on its own (a bad event does not spoil the others); the
// accepted ones share one Redis round trip for their sessions and one
// commit of the write-ahead log, which is what makes a batch cheap.
func (s *Service) TrackBatch(ctx context.Context, p auth.Principal, ins []Input) ([]Result, error) {
	if err := p.Require(model.ScopeEventsWrite); err != nil {
		return nil, err
	}
	if len(ins) == 0 || len(ins) > MaxBatch {
		return nil, s.refused(errs.InvalidField("events", "a batch holds 1 to %d events", MaxBatch), len(ins))
	}
	results := make([]Result, len(ins))
	sites := make(map[model.SiteID]*siteAnswer)
	items := make([]accepted, 0, len(ins))
	index := make([]int, 0, len(ins)) // index into ins of each item
	for i, in := range ins {
		ev, err := validate(in)
		if err != nil {
			results[i].Err = s.refusedFor(&p, in.SiteID, err, 1)
			continue
		}
		a := sites[ev.site]
		if a == nil {
			a = &siteAnswer{}
			a.site, a.err = s.authorize(ctx, p, ev.site)
			sites[ev.site] = a
		}
		if a.err != nil {
			results[i].Err = s.refusedFor(&p, in.SiteID, a.err, 1)
			continue
		}
		if excluded(&a.site, &ev) {
			results[i].EventID, results[i].Err = s.exclude(a.site.ID)
			continue
		}
		items = append(items, accepted{site: &a.site, ev: ev})
		index = append(index, i)
	}
	if len(items) > 0 {
		for k, r := range s.accept(ctx, items) {
			results[index[k]] = r
		}
	}
	return results, nil
}

// siteAnswer is a site lookup remembered for the rest of a batch.
type siteAnswer struct {
	site model.Site
	err  error
}
