package emailreports

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

const (
	// PassEvery is how often a server looks for reports due.
	PassEvery = 5 * time.Minute
	// MaxAttempts bounds the attempts at one delivery (one a pass, a
	// failed one tried again on the next).
	MaxAttempts = 5
	// claimFor is how long an attempt holds its delivery: longer than a
	// send may take (the mailer gives up after a minute), so no other
	// server starts the same one meanwhile.
	claimFor = 10 * time.Minute
	// retryAfter is how long a failed delivery waits before any server
	// tries it again: until a later pass, not another server's pass of
	// the same moment.
	retryAfter = time.Minute
	// keepFor is how long the record of a delivery is kept; the periods it
	// names are long past sending by then.
	keepFor = 400 * 24 * time.Hour
	// maxReason bounds the stored error of a failed attempt.
	maxReason = 500
)

// kinds are the reports a recipient may get.
var kinds = []model.ReportKind{model.ReportWeekly, model.ReportMonthly}

// Run makes a pass at start and every PassEvery until ctx ends. A server
// without a mailer sends nothing and does not run.
func (s *Service) Run(ctx context.Context) {
	if !s.Enabled() {
		return
	}
	t := time.NewTicker(PassEvery)
	defer t.Stop()
	for {
		if n, err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("email reports: a pass failed; the reports it did not send wait for the next", "sent", n, "err", err)
		} else if n > 0 {
			s.log.Info("email reports: sent", "reports", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// batch is the recipients of one site's report of one period.
type batch struct {
	site       model.SiteID
	period     Period
	recipients []model.ReportRecipient
}

// Pass sends every report due at the clock's now that no server sent yet,
// and returns how many it sent. Each recipient is sent only the latest
// period of each kind, once it is due, and only if they were listed before
// it was due. A site's report is read once for all its recipients.
func (s *Service) Pass(ctx context.Context) (int, error) {
	if !s.Enabled() {
		return 0, nil
	}
	now := s.now()
	batches, err := s.due(ctx, now)
	if err != nil {
		return 0, err
	}
	sent := 0
	var failures []error
	for _, b := range batches {
		rep, err := s.compose(ctx, b.site, b.period)
		if errs.KindOf(err) == errs.NotFound {
			continue // the site went
		}
		if err != nil {
			failures = append(failures, err)
			continue // its statistics cannot be read now: no attempt is spent
		}
		for _, r := range b.recipients {
			ok, err := s.deliver(ctx, rep, r)
			if err != nil {
				failures = append(failures, err)
			}
			if ok {
				sent++
			}
		}
	}
	if _, err := s.store.ForgetReports(ctx, now.Add(-keepFor)); err != nil {
		failures = append(failures, err)
	}
	return sent, errors.Join(failures...)
}

// due groups the reports due at now, and not settled, by site and period.
func (s *Service) due(ctx context.Context, now time.Time) ([]batch, error) {
	subs, err := s.store.ReportSubscriptions(ctx)
	if err != nil || len(subs) == 0 {
		return nil, err
	}
	// the latest periods start at most two months back
	settled, err := s.store.SettledReports(ctx, now.AddDate(0, -2, -1), MaxAttempts)
	if err != nil {
		return nil, err
	}
	done := map[model.ReportDelivery]bool{}
	for _, d := range settled {
		d.PeriodStart = d.PeriodStart.UTC()
		done[d] = true
	}
	type key struct {
		site  model.SiteID
		kind  model.ReportKind
		first time.Time
	}
	groups := map[key]*batch{}
	for _, sub := range subs {
		loc, err := stats.LoadLocation(sub.Timezone)
		if err != nil {
			loc = time.UTC // as the reports read a zone this machine does not know
		}
		r := sub.Recipient
		for _, kind := range kinds {
			p := Latest(kind, now, loc)
			if !r.Gets(kind) || now.Before(p.Due) || r.CreatedAt.After(p.Due) ||
				done[model.ReportDelivery{Recipient: r.ID, Kind: kind, PeriodStart: p.First}] {
				continue
			}
			k := key{r.SiteID, kind, p.First}
			if groups[k] == nil {
				groups[k] = &batch{site: r.SiteID, period: p}
			}
			groups[k].recipients = append(groups[k].recipients, r)
		}
	}
	out := make([]batch, 0, len(groups))
	for _, b := range groups {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b batch) int {
		return cmp.Or(cmp.Compare(a.site, b.site), cmp.Compare(a.period.Kind, b.period.Kind))
	})
	return out, nil
}

// deliver sends a report to one recipient if this server claims the
// delivery (no other server holds it, it is not sent, attempts are left),
// and records the outcome: sent; the failure, tried again on a pass a
// minute or more later; or, for a message handed over with no reply
// (mailer.Unknown), which may have arrived, an end: never sent again
// automatically. It reports whether it sent the message. The logs name the
// site and the delivery, never the address.
func (s *Service) deliver(ctx context.Context, rep Report, r model.ReportRecipient) (bool, error) {
	now := s.now()
	a, ok, err := s.store.ClaimReport(ctx, model.ReportDelivery{Recipient: r.ID, Kind: rep.Period.Kind, PeriodStart: rep.Period.First},
		now, now.Add(claimFor), MaxAttempts)
	if err != nil || !ok {
		return false, err
	}
	msg, err := s.message(ctx, rep, r)
	if err == nil {
		err = s.opts.Sender.Send(ctx, msg)
	}
	if err != nil {
		reason := err.Error()
		if len(reason) > maxReason {
			reason = strings.ToValidUTF8(reason[:maxReason], "")
		}
		brief := "compose"
		var me *mailer.Error
		if errors.As(err, &me) {
			brief = me.Brief()
		}
		if mailer.Unknown(err) {
			s.log.Warn("email reports: a message was handed over and no reply came; it may have arrived and is not sent again",
				"site_id", r.SiteID, "delivery", a.ID, "attempt", a.Attempt, "step", brief)
			return false, s.store.ReportUnknown(context.WithoutCancel(ctx), a.ID, reason, s.now())
		}
		s.log.Warn("email reports: a send failed", "site_id", r.SiteID, "delivery", a.ID, "attempt", a.Attempt,
			"max_attempts", MaxAttempts, "step", brief)
		return false, s.store.ReportFailed(context.WithoutCancel(ctx), a.ID, reason, s.now().Add(retryAfter))
	}
	// The mail server has the message. Should this mark fail, the claim
	// runs out and a later pass sends it again: a rare duplicate rather
	// than a report lost.
	return true, s.store.ReportSent(context.WithoutCancel(ctx), a.ID, s.now())
}

// message is the report as an email to r, with an unsubscribe link of its
// own when the server has a public URL. The link's token is kept (as a
// hash) before the message leaves, so it works as soon as it arrives.
func (s *Service) message(ctx context.Context, rep Report, r model.ReportRecipient) (mailer.Message, error) {
	var unsubscribe string
	if s.opts.PublicURL != "" {
		token, hash := auth.NewLinkToken() // one for each message: none is read back
		if err := s.store.AddReportUnsubscribe(ctx, r.ID, hash, s.now()); err != nil {
			return mailer.Message{}, err
		}
		unsubscribe = UnsubscribeURL(s.opts.PublicURL, token)
	}
	return rep.Message(s.opts.From, r.Email, s.opts.PublicURL, unsubscribe)
}
