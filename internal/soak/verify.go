package soak

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/model"
)

// Counts is what a site's events became, as ClickHouse holds them.
type Counts struct {
	// what the senders were told
	Acknowledged, Refused, CutOff, Other int
	// what ClickHouse holds
	Stored    int64 // event rows of the site
	CutStored int64 // events without an answer that were stored (allowed, once)
	Missing   int64 // acknowledged and not stored
	Doubled   int64 // rows beyond the first of an event
	// RefusedStored counts refused events that were stored anyway.
	RefusedStored int64
	// Sessions counts the site's sessions; the rest are the corrupted ones:
	// sum(sign) outside {0, 1}; at sum(sign) 0 with events stored under
	// their id; or live (sum(sign) 1) with other pageviews or custom events
	// than those stored under their id.
	Sessions, BadSign, ZeroWithEvents, WrongCounts int64
	// NoSession counts events stored without a session (every pageview and
	// custom event must have one, Redis outages included).
	NoSession int64
	// Bot events (by id, in bot_events): accepted, missing, stored more
	// than once.
	Bots, BotsMissing, BotsDoubled int64
	// Revenue events (by id, in the payments ledger): accepted, without a
	// payment, with more than one, and payments of events nobody was told
	// were accepted or might be (refused ones).
	Revenue, RevenueMissing, RevenueDoubled, RevenueExtra int64
	// Scroll depths (by their page's path, in engagements): accepted,
	// missing, stored more than once, and stored though refused.
	Scrolls, ScrollsMissing, ScrollsDoubled, ScrollsRefusedStored int64
}

// Add adds o's counts to c (the runs of a scenario).
func (c *Counts) Add(o Counts) {
	c.Acknowledged, c.Refused, c.CutOff, c.Other = c.Acknowledged+o.Acknowledged, c.Refused+o.Refused, c.CutOff+o.CutOff, c.Other+o.Other
	c.Stored, c.CutStored, c.Missing, c.Doubled = c.Stored+o.Stored, c.CutStored+o.CutStored, c.Missing+o.Missing, c.Doubled+o.Doubled
	c.RefusedStored, c.Sessions = c.RefusedStored+o.RefusedStored, c.Sessions+o.Sessions
	c.BadSign, c.ZeroWithEvents, c.WrongCounts = c.BadSign+o.BadSign, c.ZeroWithEvents+o.ZeroWithEvents, c.WrongCounts+o.WrongCounts
	c.NoSession += o.NoSession
	c.Bots, c.BotsMissing, c.BotsDoubled = c.Bots+o.Bots, c.BotsMissing+o.BotsMissing, c.BotsDoubled+o.BotsDoubled
	c.Revenue, c.RevenueMissing = c.Revenue+o.Revenue, c.RevenueMissing+o.RevenueMissing
	c.RevenueDoubled, c.RevenueExtra = c.RevenueDoubled+o.RevenueDoubled, c.RevenueExtra+o.RevenueExtra
	c.Scrolls, c.ScrollsMissing = c.Scrolls+o.Scrolls, c.ScrollsMissing+o.ScrollsMissing
	c.ScrollsDoubled, c.ScrollsRefusedStored = c.ScrollsDoubled+o.ScrollsDoubled, c.ScrollsRefusedStored+o.ScrollsRefusedStored
}

// Corrupted counts the corrupted sessions, and the events left without one.
func (c Counts) Corrupted() int64 { return c.BadSign + c.ZeroWithEvents + c.WrongCounts + c.NoSession }

// OK reports whether the promise held: every acknowledged event stored
// once, nothing refused stored, every row accounted for, no session
// corrupted, and no answer other than success, 503 or none.
func (c Counts) OK() bool {
	return c.Missing == 0 && c.Doubled == 0 && c.RefusedStored == 0 && c.Other == 0 &&
		c.Stored == int64(c.Acknowledged)+c.CutStored && c.Corrupted() == 0 &&
		c.BotsMissing == 0 && c.BotsDoubled == 0 && c.RevenueMissing == 0 && c.RevenueDoubled == 0 && c.RevenueExtra == 0 &&
		c.ScrollsMissing == 0 && c.ScrollsDoubled == 0 && c.ScrollsRefusedStored == 0
}

func (c Counts) String() string {
	return fmt.Sprintf("%d acknowledged, %d refused, %d cut off (%d of them stored), %d other answers; %d stored: "+
		"%d missing, %d doubled, %d refused but stored; %d sessions, %d corrupted (%d sum(sign) outside {0,1}, "+
		"%d at 0 with events, %d with other counts than their events, %d events without a session); %d bots: %d missing, %d doubled; "+
		"%d revenue events: %d missing, %d doubled, %d extra payments; "+
		"%d scroll depths: %d missing, %d doubled, %d refused but stored",
		c.Acknowledged, c.Refused, c.CutOff, c.CutStored, c.Other, c.Stored, c.Missing, c.Doubled, c.RefusedStored,
		c.Sessions, c.Corrupted(), c.BadSign, c.ZeroWithEvents, c.WrongCounts, c.NoSession, c.Bots, c.BotsMissing, c.BotsDoubled,
		c.Revenue, c.RevenueMissing, c.RevenueDoubled, c.RevenueExtra, c.Scrolls, c.ScrollsMissing, c.ScrollsDoubled,
		c.ScrollsRefusedStored)
}

// against holds the answers to what was stored, by path: the rows, those
// beyond the first of a path, the acknowledged paths not stored, and the
// refused and the cut off ones stored.
func (a answers) against(stored map[string]int64) (rows, doubled, missing, refusedStored, cutStored int64) {
	for _, n := range stored {
		rows += n
		doubled += n - 1
	}
	count := func(paths []string, keep func(n int64) bool) (k int64) {
		for _, p := range paths {
			if keep(stored[p]) {
				k++
			}
		}
		return k
	}
	stores := func(n int64) bool { return n > 0 }
	return rows, doubled, count(a.acked, func(n int64) bool { return n == 0 }), count(a.refused, stores), count(a.cut, stores)
}

// Payments reads the payments ledger (pgstore.Store).
type Payments interface {
	PaymentCounts(ctx context.Context, site model.SiteID, provider string) (map[string]int64, error)
}

// Verify counts what became of the ledger's events of site.
func Verify(ctx context.Context, ch *chstore.Store, pay Payments, site string, l *Ledger) (Counts, error) {
	l.mu.Lock()
	events, scrolls := l.answers.clone(), l.scrolls.clone()
	bots, revenue, cutRevenue := slices.Clone(l.bots), slices.Clone(l.revenue), l.cutRevenue
	c := Counts{Acknowledged: len(l.acked), Refused: len(l.refused), CutOff: len(l.cut), Other: len(l.other) + len(l.scrolls.other),
		Bots: int64(len(l.bots)), Revenue: int64(len(l.revenue)), Scrolls: int64(len(l.scrolls.acked))}
	l.mu.Unlock()
	stored, err := ch.PathCounts(ctx, "events", model.SiteID(site))
	if err != nil {
		return c, fmt.Errorf("soak: verify: %w", err)
	}
	c.Stored, c.Doubled, c.Missing, c.RefusedStored, c.CutStored = events.against(stored)
	scrolled, err := ch.PathCounts(ctx, "engagements", model.SiteID(site))
	if err != nil {
		return c, fmt.Errorf("soak: verify: %w", err)
	}
	// a scroll depth without an answer may be stored, once
	_, c.ScrollsDoubled, c.ScrollsMissing, c.ScrollsRefusedStored, _ = scrolls.against(scrolled)
	err = ch.QueryRow(ctx, `SELECT toInt64(count()), toInt64(countIf(s NOT IN (0, 1))), toInt64(countIf(s = 0 AND epv + eev > 0)),
			toInt64(countIf(s = 1 AND (pv != epv OR ev != eev)))
		FROM (SELECT session_id, toInt64(sum(sign)) s, toInt64(sum(sign * pageviews)) pv, toInt64(sum(sign * events)) ev
			FROM sessions WHERE site_id = ? GROUP BY session_id) AS session_rows
		ALL FULL OUTER JOIN
		(SELECT session_id, toInt64(countIf(name = 'pageview')) epv, toInt64(countIf(name != 'pageview')) eev
			FROM events WHERE site_id = ? AND session_id != 0 GROUP BY session_id) AS event_rows
		USING session_id`, site, site).Scan(&c.Sessions, &c.BadSign, &c.ZeroWithEvents, &c.WrongCounts)
	if err != nil {
		return c, fmt.Errorf("soak: verify sessions: %w", err)
	}
	err = ch.QueryRow(ctx, `SELECT toInt64(countIf(session_id = 0)) FROM events WHERE site_id = ?`, site).Scan(&c.NoSession)
	if err != nil {
		return c, fmt.Errorf("soak: verify sessions: %w", err)
	}
	if err := verifyBots(ctx, ch, site, bots, &c); err != nil {
		return c, err
	}
	payments, err := pay.PaymentCounts(ctx, model.SiteID(site), model.ProviderEvents)
	if err != nil {
		return c, fmt.Errorf("soak: verify revenue: %w", err)
	}
	for _, id := range revenue {
		switch n := payments[id]; {
		case n == 0:
			c.RevenueMissing++
		case n > 1:
			c.RevenueDoubled++
		}
	}
	// payments beyond the accepted events: at most one per revenue event
	// that got no answer
	c.RevenueExtra = max(0, int64(len(payments))-int64(len(revenue))-int64(cutRevenue))
	return c, nil
}

// verifyBots looks for the accepted bot events in bot_events.
func verifyBots(ctx context.Context, ch *chstore.Store, site string, ids []string, c *Counts) error {
	span := model.Span{Sites: []model.SiteID{model.SiteID(site)}, From: time.Now().Add(-24 * time.Hour), To: time.Now().Add(time.Hour)}
	found, err := ch.ExistingEventIDs(ctx, "bot_events", span, ids)
	if err != nil {
		return fmt.Errorf("soak: verify bots: %w", err)
	}
	c.BotsMissing = int64(len(ids) - len(found))
	if err := ch.QueryRow(ctx, "SELECT toInt64(count() - uniqExact(event_id)) FROM bot_events WHERE site_id = ?", site).
		Scan(&c.BotsDoubled); err != nil {
		return fmt.Errorf("soak: verify bots: %w", err)
	}
	return nil
}
