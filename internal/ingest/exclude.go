package ingest

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/metrics"
	"github.com/tally-analytics/tally/internal/model"
)

// excluded reports whether an event matches its site's exclusions: its
// page (as stored), the host of its URL, or the visitor's address. A site
// without exclusions has no shield, and its events cost a nil check.
func excluded(site *model.Site, ev *event) bool {
	if site.Shield == nil {
		return false
	}
	return site.Shield.Excludes(pathnameOf(ev), model.URLHost(ev.url.Hostname()), ev.ip)
}

// exclude answers an excluded event as a stored one would be answered — an
// event id — without storing it: the sender did nothing wrong (a shielded
// visitor's browser cannot tell). It is counted for the site's tracking
// health (under model.Excluded, with the refusals) and in the metrics.
func (s *Service) exclude(site model.SiteID) (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", s.refusedAt(site, "", fmt.Errorf("ingest: event id: %w", err), 1)
	}
	s.countAt(site, model.Excluded, nil, 1)
	s.metrics.CountEvents(metrics.OutcomeExcluded, 1)
	return id.String(), nil
}
