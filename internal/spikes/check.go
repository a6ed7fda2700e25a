package spikes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

const (
	// CheckEvery is how often a server compares the sites' current
	// visitors with their thresholds: a spike is mailed within about a
	// minute of its being seen.
	CheckEvery = time.Minute
	// QuietFor is the least time between two notifications of a site: a
	// spike that lasts the afternoon is one email, not one a minute, and
	// a site whose traffic stays over its threshold hears of it twice a
	// day.
	QuietFor = 12 * time.Hour
	// keepLinksFor is how long a message's unsubscribe link works, as an
	// email report's does.
	keepLinksFor = 400 * 24 * time.Hour
)

// Run checks at start and every CheckEvery until ctx ends. A server
// without a mailer sends nothing and does not run.
func (s *Service) Run(ctx context.Context) {
	if !s.Enabled() {
		return
	}
	t := time.NewTicker(CheckEvery)
	defer t.Stop()
	for {
		if n, err := s.Check(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("spike notifications: a check failed; the sites it did not check wait for the next", "sent", n, "err", err)
		} else if n > 0 {
			s.log.Info("spike notifications: sent", "messages", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check compares the current visitors of every site whose notification may
// go (it has addresses, and its last one is QuietFor old or more) with its
// threshold, sends the notification of each that reached it, and returns
// how many messages it sent.
func (s *Service) Check(ctx context.Context) (int, error) {
	if !s.Enabled() {
		return 0, nil
	}
	now := s.now()
	watches, err := s.store.SpikeWatches(ctx, now.Add(-QuietFor))
	if err != nil {
		return 0, err
	}
	sent := 0
	var failures []error
	for _, w := range watches {
		n, err := s.watch(ctx, w, now)
		sent += n
		if err != nil {
			failures = append(failures, err)
		}
	}
	if sent > 0 {
		// tokens are made only by sending: forgetting the old ones then
		// keeps them bounded
		if err := s.store.ForgetSpikeUnsubscribes(ctx, now.Add(-keepLinksFor)); err != nil {
			failures = append(failures, err)
		}
	}
	return sent, errors.Join(failures...)
}

// watch reads a site's current visitors and, if they reach its threshold
// and this server claims the notification, sends it to each address. When
// every message failed the claim is given back, so that the next check
// tries again rather than the site going unnotified for QuietFor; but a
// message handed over with no reply (mailer.Unknown) may have arrived, and
// then the claim stays: one notification missed rather than sent twice.
func (s *Service) watch(ctx context.Context, w model.SpikeNotification, now time.Time) (int, error) {
	pr := auth.ForEmailReport(w.SiteID) // that site's statistics, nothing else
	// the hashes' lengths first: most minutes, most sites are far from
	// their threshold, and then no visitor is read
	bound, err := s.stats.RealtimeAtMost(ctx, pr, stats.Request{SiteID: w.SiteID})
	if errs.KindOf(err) == errs.NotFound {
		return 0, nil // the site went
	}
	if err != nil || bound < int64(w.Threshold) {
		return 0, err
	}
	rt, err := s.stats.Realtime(ctx, pr, stats.Request{SiteID: w.SiteID})
	if errs.KindOf(err) == errs.NotFound {
		return 0, nil // the site went
	}
	if err != nil || rt.Visitors < int64(w.Threshold) {
		return 0, err
	}
	site, _, err := s.sites.Check(ctx, pr, w.SiteID, accounts.ReadStats)
	if errs.KindOf(err) == errs.NotFound {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// claimed as of now, not as of the check's start: the sites before
	// this one may have taken a while, and the quiet period is from the send
	now = s.now()
	if ok, err := s.store.ClaimSpike(ctx, w.SiteID, now, now.Add(-QuietFor)); err != nil || !ok {
		return 0, err // another server sends it, or the notification was turned off
	}
	sp := Spike{Site: site, Threshold: w.Threshold, Realtime: rt.Realtime, At: rt.At}
	sent, failed, unknown := 0, 0, 0
	for _, r := range w.Recipients {
		err := s.send(ctx, sp, r)
		switch {
		case err == nil:
			sent++
		case errors.Is(err, errs.ErrNotFound): // the address was removed meanwhile
		case mailer.Unknown(err):
			unknown++
			s.log.Warn("spike notifications: a message was handed over and no reply came; it may have arrived and is not sent again",
				"site_id", w.SiteID, "step", brief(err))
		default:
			failed++
			s.log.Warn("spike notifications: a send failed", "site_id", w.SiteID, "step", brief(err))
		}
	}
	if sent == 0 && unknown == 0 && failed > 0 {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTime)
		defer cancel()
		if err := s.store.ReleaseSpike(rctx, w.SiteID, now, w.LastSentAt); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("spikes: site %s: none of %d messages was sent; the next check tries again", w.SiteID, failed)
	}
	return sent, nil
}

// brief is how the log names a failed send: its step and reply code,
// never the server's text, which may quote the address.
func brief(err error) string {
	var me *mailer.Error
	if errors.As(err, &me) {
		return me.Brief()
	}
	return "compose"
}

// releaseTime bounds giving a claim back, which a stopping server waits for.
const releaseTime = 5 * time.Second

// send mails the spike to r, with an unsubscribe link of its own when the
// server has a public URL (its token kept, as a hash, before the message
// leaves, and forgotten if it surely did not: a message whose outcome is
// unknown may have arrived with its link). A recipient removed meanwhile
// is errs.ErrNotFound.
func (s *Service) send(ctx context.Context, sp Spike, r model.SpikeRecipient) (err error) {
	var unsubscribe string
	if s.opts.PublicURL != "" {
		token, hash := auth.NewLinkToken() // one for each message: none is read back
		if err := s.store.AddSpikeUnsubscribe(ctx, r.ID, hash, s.now()); err != nil {
			return err
		}
		defer func() {
			if err != nil && !mailer.Unknown(err) {
				// a failed send would otherwise leave a token each check
				_ = s.store.DropSpikeUnsubscribe(context.WithoutCancel(ctx), hash)
			}
		}()
		unsubscribe = UnsubscribeURL(s.opts.PublicURL, token)
	}
	msg, err := sp.Message(s.opts.From, r.Email, s.opts.PublicURL, unsubscribe)
	if err != nil {
		return err
	}
	return s.opts.Sender.Send(ctx, msg)
}
