package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/wal"
)

func TestRefusalReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errs.InvalidField("url", "bad"), model.RefusedInvalidPayload},
		{errs.E(errs.UnsupportedMedia, "unsupported_media_type", "xml"), model.RefusedInvalidPayload},
		{invalidProps("props.a", "bad"), model.RefusedInvalidProps},
		{errs.E(errs.TooLarge, "payload_too_large", "big"), model.RefusedBodyTooLarge},
		{errs.E(errs.RateLimited, "rate_limit_exceeded", "slow down"), model.RefusedRateLimited},
		{fmt.Errorf("ingest: write: %w", &errs.Error{Kind: errs.Unavailable, Err: wal.ErrFull}), model.RefusedOverWALBudget},
		{errs.StoreDown(errors.New("dial")), model.RefusedUnavailable},
		{errors.New("ingest: event id: broken"), model.RefusedUnavailable},
		{accounts.InvalidSite(), ""},
		{errs.E(errs.Forbidden, "forbidden", "viewer"), ""},
		{errs.E(errs.Unauthenticated, "unauthorized", "who?"), ""},
	} {
		if got := refusalReason(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}

// siteBook is a SiteAccess over fixed sites, each with the key that may
// send to it; down makes every answer an outage.
type siteBook struct {
	sites map[model.SiteID]model.KeyID
	down  bool
}

func (b *siteBook) Site(_ context.Context, id model.SiteID) (model.Site, error) {
	if b.down {
		return model.Site{}, errs.StoreDown(errors.New("dial"))
	}
	if _, ok := b.sites[id]; !ok {
		return model.Site{}, errs.ErrNotFound
	}
	return model.Site{ID: id}, nil
}

func (b *siteBook) Check(ctx context.Context, p auth.Principal, id model.SiteID, _ accounts.Action) (model.Site, model.Role, error) {
	site, err := b.Site(ctx, id)
	if errors.Is(err, errs.ErrNotFound) || (err == nil && b.sites[id] != p.KeyID) {
		return model.Site{}, "", accounts.InvalidSite()
	}
	return site, model.RoleOwner, err
}

// rowSink keeps what it is given, or fails.
type rowSink struct {
	rows []model.RefusalRow
	fail bool
}

func (s *rowSink) InsertRefusals(_ context.Context, rows []model.RefusalRow) error {
	if s.fail {
		return errs.StoreDown(errors.New("dial"))
	}
	s.rows = append(s.rows, rows...)
	return nil
}

func refusalService(book *siteBook, sink RefusalSink, now time.Time) *Service {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &Service{access: book, refusals: newRefusals(log), refusalSink: sink, now: func() time.Time { return now }, log: log}
}

// A flush stores one row per site, quarter and reason, for the sites the
// sender could send to; what cannot be told or stored now waits for the
// next flush.
func TestRefusalsFlush(t *testing.T) {
	ctx := context.Background()
	book := &siteBook{sites: map[model.SiteID]model.KeyID{"a": "key-a", "b": "key-b"}}
	sink := &rowSink{}
	at := time.Date(2026, 7, 1, 10, 52, 30, 0, time.UTC)
	s := refusalService(book, sink, at)
	keyA := &auth.Principal{UserID: "u-a", KeyID: "key-a"}
	bad := errs.InvalidField("url", "bad")

	s.countRefused(nil, "a", bad, 2)    // the tracking script, a site that exists
	s.countRefused(keyA, "a", bad, 1)   // the key of a
	s.countRefused(keyA, "b", bad, 5)   // the key of a, to b: not counted
	s.countRefused(nil, "nope", bad, 3) // an unknown site: not counted
	s.countRefused(nil, "b", accounts.InvalidSite(), 1)
	s.RefusedRequest(nil, []string{"b", "b", "nope"}, errs.E(errs.RateLimited, "rate_limit_exceeded", "slow"))
	s.countAt("b", model.RefusedHostMismatch, bad, 1)
	if err := s.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	quarter := time.Date(2026, 7, 1, 10, 45, 0, 0, time.UTC)
	want := []model.RefusalRow{
		{SiteID: "a", Bucket: quarter, Reason: model.RefusedInvalidPayload, Events: 3},
		{SiteID: "b", Bucket: quarter, Reason: model.RefusedHostMismatch, Events: 1},
		{SiteID: "b", Bucket: quarter, Reason: model.RefusedRateLimited, Events: 2},
	}
	if fmt.Sprint(sink.rows) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", sink.rows, want)
	}

	// sites that cannot be checked, then rows that cannot be stored, wait
	sink.rows = nil
	s.countRefused(keyA, "a", bad, 4)
	book.down = true
	if err := s.FlushRefusals(ctx); err != nil || len(sink.rows) != 0 {
		t.Fatalf("with the sites unknown: %v, %v", sink.rows, err)
	}
	book.down, sink.fail = false, true
	if err := s.FlushRefusals(ctx); err == nil {
		t.Fatal("a failed insert was not reported")
	}
	sink.fail = false
	if err := s.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	want = []model.RefusalRow{{SiteID: "a", Bucket: quarter, Reason: model.RefusedInvalidPayload, Events: 4}}
	if fmt.Sprint(sink.rows) != fmt.Sprint(want) {
		t.Fatalf("after the outages: %v, want %v", sink.rows, want)
	}
}

// Made-up site ids fill the pending counts at most to their bound.
func TestRefusalsBounded(t *testing.T) {
	s := refusalService(&siteBook{}, &rowSink{}, time.Now())
	for i := range MaxPendingRefusals + 50 {
		s.countRefused(nil, fmt.Sprintf("site-%d", i), errs.InvalidField("url", "bad"), 1)
	}
	pending, _, dropped := s.refusals.take()
	if len(pending) != MaxPendingRefusals || dropped != 50 {
		t.Errorf("%d pending, %d dropped; want %d and 50", len(pending), dropped, MaxPendingRefusals)
	}
}

// slowSink holds each insert until released.
type slowSink struct {
	rowSink
	entered, release chan struct{}
}

func (s *slowSink) InsertRefusals(ctx context.Context, rows []model.RefusalRow) error {
	s.entered <- struct{}{}
	<-s.release
	return s.rowSink.InsertRefusals(ctx, rows)
}

// A flush asked for while the periodic one is storing the counts returns
// only once they are stored: its caller (shutdown, a test) then reads them.
func TestFlushWaitsForTheFlushUnderWay(t *testing.T) {
	ctx := context.Background()
	book := &siteBook{sites: map[model.SiteID]model.KeyID{"a": "key-a"}}
	sink := &slowSink{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := refusalService(book, sink, time.Date(2026, 7, 1, 10, 52, 30, 0, time.UTC))
	s.countRefused(nil, "a", errs.InvalidField("url", "bad"), 2)

	under := make(chan error, 1)
	go func() { under <- s.FlushRefusals(ctx) }()
	<-sink.entered // the first flush took the counts and is storing them
	second := make(chan error, 1)
	go func() { second <- s.FlushRefusals(ctx) }()
	select {
	case err := <-second:
		t.Fatalf("the second flush returned (%v) while the first was storing the counts", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(sink.release)
	if err := <-under; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != 1 || sink.rows[0].Events != 2 {
		t.Errorf("stored %+v, want one row of 2 events", sink.rows)
	}
}
