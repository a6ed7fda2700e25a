package export

import (
	"context"
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// EventsEndpoint are the parameters of the raw event export: a site and
// dates as the reports take them (days of the timezone parameter, else the
// site's), except that one day is a range (date_to may equal date_from)
// and filters are refused, not ignored.
var EventsEndpoint = stats.Endpoint{OneDay: true, NoFilters: true}

// EventStore reads a site's stored events; chstore implements it.
type EventStore interface {
	// EventHours counts the events of site in [from, to) by hour, in
	// order, leaving out the hours without any.
	EventHours(ctx context.Context, site model.SiteID, from, to time.Time) ([]HourCount, error)
	// StreamEvents hands fn the events of site in [from, to) ordered by
	// time, then event id, one at a time without collecting them: fn gets
	// the same row each time, filled anew. An error of fn stops the stream
	// and is returned.
	StreamEvents(ctx context.Context, site model.SiteID, from, to time.Time, fn func(*model.EventRow) error) error
}

// HourCount is the number of events of one hour.
type HourCount struct {
	Start  time.Time // UTC, on the hour
	Events int64
}

// Ranges resolves a caller's export request with the access rules of the
// reports (stats:read, a role on the site); the stats service implements it.
type Ranges interface {
	Range(ctx context.Context, p auth.Principal, r stats.Request) (stats.Range, error)
}

// Events exports the raw events of a site.
type Events struct {
	ranges Ranges
	store  EventStore
}

// NewEvents wires the export; ranges may be nil for a caller that only uses
// Of (the command line).
func NewEvents(ranges Ranges, store EventStore) *Events {
	return &Events{ranges: ranges, store: store}
}

// Open checks that p may export r's site and resolves r's range. Nothing
// is read yet: errors here come before any byte of an answer.
func (e *Events) Open(ctx context.Context, p auth.Principal, r stats.Request) (*EventExport, error) {
	rg, err := e.ranges.Range(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return e.Of(rg), nil
}

// Of is the export of a range whose access was settled by the caller.
func (e *Events) Of(rg stats.Range) *EventExport {
	return &EventExport{Range: rg, store: e.store}
}

// EventExport is the export of one site's range, ready to write.
type EventExport struct {
	Range stats.Range
	store EventStore
}

// Progress is how far an export got: the records written, of about
// Expected (the events stored when it started).
type Progress struct {
	Written, Expected int64
}

const (
	// partEvents is about how many events one query reads. ClickHouse
	// sorts a query's rows before it sends the first, so the range is read
	// in parts of consecutive hours: that bounds its work per query and how
	// long one connection is held, whatever the size of the range.
	partEvents = 100_000
	// partTimeout bounds the query of one part, the time its reader takes
	// included: a slow reader holds the query open (one that stops reading
	// is dropped sooner, by its writer).
	partTimeout = 30 * time.Minute
	// flushEvery: records reach the reader at least this often.
	flushEvery = time.Second
)

// WriteTo writes every event of the range to enc, in the order of time,
// then event id, and returns how many it wrote. Events are read and
// written one at a time, never collected; enc is flushed every second and
// at the end. progress, if not nil, is told the expected count first, then
// how far the export got at each flush.
func (x *EventExport) WriteTo(ctx context.Context, enc EventEncoder, progress func(Progress)) (int64, error) {
	rg := x.Range
	hours, err := x.store.EventHours(ctx, rg.Site.ID, rg.From, rg.To)
	if err != nil {
		return 0, fmt.Errorf("export: events: %w", err)
	}
	var pr Progress
	for _, h := range hours {
		pr.Expected += h.Events
	}
	tell := func() {
		if progress != nil {
			progress(pr)
		}
	}
	tell()
	var rec api.ExportedEvent
	lastFlush := time.Now()
	write := func(row *model.EventRow) error {
		fill(&rec, row)
		if err := enc.Encode(&rec); err != nil {
			return err
		}
		pr.Written++
		if pr.Written%256 == 0 && time.Since(lastFlush) >= flushEvery {
			if err := enc.Flush(); err != nil {
				return err
			}
			lastFlush = time.Now()
			tell()
		}
		return nil
	}
	for _, p := range plan(rg.From, rg.To, hours, partEvents) {
		if err := x.readPart(ctx, p, write); err != nil {
			return pr.Written, fmt.Errorf("export: events: %w", err)
		}
	}
	if err := enc.Flush(); err != nil {
		return pr.Written, fmt.Errorf("export: events: %w", err)
	}
	tell()
	return pr.Written, nil
}

func (x *EventExport) readPart(ctx context.Context, p part, fn func(*model.EventRow) error) error {
	ctx, cancel := context.WithTimeout(ctx, partTimeout)
	defer cancel()
	return x.store.StreamEvents(ctx, x.Range.Site.ID, p.from, p.to, fn)
}

// part is a span [from, to) of a range, read by one query.
type part struct{ from, to time.Time }

// plan cuts [from, to) into consecutive parts at hour boundaries, each of
// about target events by the hours' counts (an hour is never split, so a
// part holds more when one hour alone does). The parts cover the whole
// range whatever the counts: an event stored after they were counted falls
// in one too.
func plan(from, to time.Time, hours []HourCount, target int64) []part {
	var parts []part
	start, n := from, int64(0)
	for _, h := range hours {
		if n > 0 && n+h.Events > target && h.Start.After(start) {
			parts = append(parts, part{start, h.Start})
			start, n = h.Start, 0
		}
		n += h.Events
	}
	return append(parts, part{start, to})
}
