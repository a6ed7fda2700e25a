package revenue

import (
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
)

// clientVisitor is the visitor id of a client-supplied identifier, the same
// as ingestion derives from the tracker's analytics_vid.
func clientVisitor(site model.SiteID, id string) uint64 { return ingest.FromClientID(site, id) }
