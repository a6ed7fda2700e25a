package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/outage"
	"github.com/tally-analytics/tally/internal/wal"
)

// RefusalSink stores counts of refused events (ClickHouse's ingest_refusals).
type RefusalSink interface {
	InsertRefusals(ctx context.Context, rows []model.RefusalRow) error
}

// MaxPendingRefusals bounds the distinct (caller, site, quarter, reason)
// counts kept between two flushes. A flood of refusals for made-up site ids
// fills it at worst: further new keys are dropped until the next flush (and
// logged), so memory stays bounded whatever clients send.
const MaxPendingRefusals = 2000

// refusals counts refused events in memory, per caller, site as the request
// named it, quarter of an hour and reason; nothing is checked or stored on
// the request path. A flush (once per flush interval) keeps the counts of
// sites the caller could have sent to — a site that exists for the
// tracking script, one the credential may send events to for the API —
// and adds them to ClickHouse in one insert. So nothing refused for an
// unknown site, or for a site of another account, is counted for any site,
// and a request pays for a refusal only a map update.
type refusals struct {
	// flushing is held through a flush: a flush asked for while another
	// runs (the periodic one) waits for it, so that it returns only once
	// every count gathered before it was stored or given back
	flushing sync.Mutex
	mu       sync.Mutex
	pending  map[refusalKey]uint64
	callers  map[string]auth.Principal // by refusalKey.caller
	dropped  int64                     // counts dropped since the last flush (pending full)
	failed   *outage.Reporter
	log      *slog.Logger
}

type refusalKey struct {
	caller string // "" for the tracking script (no credential)
	site   model.SiteID
	bucket int64 // Unix seconds of the quarter's start
	reason string
}

func newRefusals(log *slog.Logger) *refusals {
	return &refusals{pending: map[refusalKey]uint64{}, callers: map[string]auth.Principal{}, log: log,
		failed: outage.New(log, "ingest: refusal counts cannot be stored (ClickHouse unavailable); they wait in memory", 0)}
}

// callerID names a principal among the pending counts ("" = no credential).
func callerID(p *auth.Principal) string {
	switch {
	case p == nil:
		return ""
	case p.IsKey():
		return "key:" + string(p.KeyID)
	default:
		return "user:" + string(p.UserID)
	}
}

// add counts n events refused at for reason, sent by p (nil: the tracking
// script) to the site a request named.
func (r *refusals) add(p *auth.Principal, site string, at time.Time, reason string, n int) {
	site = strings.TrimSpace(site) // as validation reads it
	if n <= 0 || site == "" || len(site) > MaxSiteIDLen {
		return
	}
	r.addKey(refusalKey{caller: callerID(p), site: model.SiteID(site), bucket: at.Truncate(model.RefusalBucket).Unix(), reason: reason}, p, n)
}

// addKey counts n events under k; p is the caller k names, if any.
func (r *refusals) addKey(k refusalKey, p *auth.Principal, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pending[k]; !ok && len(r.pending) >= MaxPendingRefusals {
		r.dropped += int64(n)
		return
	}
	r.pending[k] += uint64(n)
	if p != nil {
		if _, ok := r.callers[k.caller]; !ok {
			r.callers[k.caller] = *p
		}
	}
}

// take empties the pending counts and returns them.
func (r *refusals) take() (map[refusalKey]uint64, map[string]auth.Principal, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pending, callers, dropped := r.pending, r.callers, r.dropped
	r.pending, r.callers, r.dropped = map[refusalKey]uint64{}, map[string]auth.Principal{}, 0
	return pending, callers, dropped
}

// giveBack returns rows that could not be stored, to go with the next
// flush (as counts of the tracking script: they were checked already).
func (r *refusals) giveBack(rows []model.RefusalRow) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range rows {
		k := refusalKey{site: row.SiteID, bucket: row.Bucket.Unix(), reason: row.Reason, caller: checked}
		if _, ok := r.pending[k]; !ok && len(r.pending) >= MaxPendingRefusals {
			r.dropped += int64(row.Events)
			continue
		}
		r.pending[k] += row.Events
	}
}

// checked is the caller of counts whose site was already checked.
const checked = "\x00checked"

// refusalReason is the reason err counts under, or "" when it does not count
// for the site the request named: the credential may not send to it, or
// the site does not exist.
func refusalReason(err error) string {
	if errors.Is(err, wal.ErrFull) {
		return model.RefusedOverWALBudget
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		return model.RefusedUnavailable // a failure of the server's own
	}
	switch e.Kind {
	case errs.Invalid, errs.UnsupportedMedia:
		switch e.Code {
		case accounts.InvalidSite().Code:
			return ""
		case "invalid_props":
			return model.RefusedInvalidProps
		}
		return model.RefusedInvalidPayload
	case errs.TooLarge:
		return model.RefusedBodyTooLarge
	case errs.RateLimited:
		return model.RefusedRateLimited
	case errs.Unavailable, errs.Internal:
		return model.RefusedUnavailable
	}
	return ""
}

// countRefused counts n events refused with err, sent by p (nil: the
// tracking script) to the site a request named, for that site's tracking
// health.
func (s *Service) countRefused(p *auth.Principal, site string, err error, n int) {
	if reason := refusalReason(err); reason != "" {
		s.refusals.add(p, site, s.now(), reason, n)
	}
}

// countAt counts n events refused with err for site, already checked,
// under reason (or, when reason is empty, the reason of err).
func (s *Service) countAt(site model.SiteID, reason string, err error, n int) {
	if reason == "" {
		reason = refusalReason(err)
	}
	if reason != "" {
		s.refusals.addKey(refusalKey{caller: checked, site: site, bucket: s.now().Truncate(model.RefusalBucket).Unix(), reason: reason}, nil, n)
	}
}

// RefusedRequest counts the events of a request the API refused before they
// reached the service (too large, not JSON, over a rate limit): sites holds
// the site_id of each event the request was seen to carry, p is the caller
// (nil: the tracking script).
func (s *Service) RefusedRequest(p *auth.Principal, sites []string, err error) {
	for _, site := range sites {
		s.countRefused(p, site, err, 1)
	}
}

// FlushRefusals stores the refusal counts gathered since the last flush, for
// the sites their callers could send to. Counts that cannot be stored wait
// for the next flush.
func (s *Service) FlushRefusals(ctx context.Context) error {
	s.refusals.flushing.Lock()
	defer s.refusals.flushing.Unlock()
	pending, callers, dropped := s.refusals.take()
	if dropped > 0 {
		s.log.Warn("ingest: refusal counts dropped: too many distinct sites refused within one flush interval",
			"events", dropped, "max_keys", MaxPendingRefusals)
	}
	if len(pending) == 0 {
		return nil
	}
	type access struct {
		caller string
		site   model.SiteID
	}
	answers := map[access]verdict{}
	sums := map[refusalKey]uint64{} // caller cleared: one row per site, quarter and reason
	for k, n := range pending {
		a := access{k.caller, k.site}
		v, seen := answers[a]
		if !seen {
			v = s.mayCount(ctx, k.caller, callers, k.site)
			answers[a] = v
		}
		switch v {
		case counts:
			k.caller = ""
			sums[k] += n
		case unknown:
			p, ok := callers[k.caller]
			s.refusals.add(principalOrNil(p, ok), string(k.site), time.Unix(k.bucket, 0), k.reason, int(n))
		}
	}
	rows := make([]model.RefusalRow, 0, len(sums))
	for k, n := range sums {
		rows = append(rows, model.RefusalRow{SiteID: k.site, Bucket: time.Unix(k.bucket, 0).UTC(), Reason: k.reason, Events: n})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.SiteID != b.SiteID {
			return a.SiteID < b.SiteID
		}
		if !a.Bucket.Equal(b.Bucket) {
			return a.Bucket.Before(b.Bucket)
		}
		return a.Reason < b.Reason
	})
	if err := s.refusalSink.InsertRefusals(ctx, rows); err != nil {
		s.refusals.giveBack(rows)
		s.refusals.failed.Fail(int64(len(rows)), err)
		return err
	}
	s.refusals.failed.OK()
	return nil
}

// verdict is whether refusals of a caller count for a site.
type verdict int

const (
	ignored verdict = iota // the site does not exist, or the caller may not send to it
	counts
	unknown // cannot be told now (a store down): asked again at the next flush
)

// mayCount tells whether refusals sent by caller count for site: the site
// exists (the tracking script), or the credential may send events to it.
func (s *Service) mayCount(ctx context.Context, caller string, callers map[string]auth.Principal, site model.SiteID) verdict {
	var err error
	switch p, ok := callers[caller]; {
	case caller == checked:
		return counts
	case caller == "":
		_, err = s.access.Site(ctx, site)
	case ok:
		_, _, err = s.access.Check(ctx, p, site, accounts.SendEvents)
	default:
		return ignored
	}
	switch {
	case err == nil:
		return counts
	case errs.Is(err, errs.Unavailable):
		return unknown
	}
	return ignored // not found, not the caller's, or a site id no store can hold
}

func principalOrNil(p auth.Principal, ok bool) *auth.Principal {
	if !ok {
		return nil
	}
	return &p
}

// RunRefusals flushes the refusal counts every interval until ctx ends, and
// once more then.
func (s *Service) RunRefusals(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = s.FlushRefusals(final)
			cancel()
			return
		case <-t.C:
			_ = s.FlushRefusals(ctx)
		}
	}
}
