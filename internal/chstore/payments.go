package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

// InsertPayments writes converted payments and refunds in one batch.
func (s *Store) InsertPayments(ctx context.Context, rows []model.Payment, writtenAt time.Time) error {
	return s.insert(ctx, "payments", "INSERT INTO payments (site_id, ts, payment_id, provider, transaction_id, kind, "+
		"amount, currency, base_amount, base_currency, visitor_id, event_name, attributed, source, source_type, entry_page, "+
		"utm_source, utm_medium, utm_campaign, utm_content, country_code, device, ft_source, ft_source_type, ft_entry_page, "+
		"ft_utm_source, ft_utm_medium, ft_utm_campaign, ft_utm_content, ft_country_code, ft_device, lt_source, lt_source_type, "+
		"lt_entry_page, lt_utm_source, lt_utm_medium, lt_utm_campaign, lt_utm_content, lt_country_code, lt_device, written_at)",
		len(rows), func(b driver.Batch, i int) error {
			p := rows[i]
			var base int64
			if p.BaseAmount != nil {
				base = *p.BaseAmount
			}
			var attributed uint8
			var a model.PaymentAttribution
			if p.Attribution != nil {
				attributed, a = 1, *p.Attribution
			}
			ln, f, lt := a.LastNonDirect, a.First, a.LastTouch()
			return b.Append(string(p.SiteID), utc(p.OccurredAt), p.ID, p.Provider, p.TransactionID, string(p.Kind),
				p.Amount, p.Currency, base, p.BaseCurrency, p.VisitorID, p.EventName, attributed,
				ln.Source, ln.SourceType, ln.EntryPage, ln.UTMSource, ln.UTMMedium, ln.UTMCampaign, ln.UTMContent, ln.CountryCode, ln.Device,
				f.Source, f.SourceType, f.EntryPage, f.UTMSource, f.UTMMedium, f.UTMCampaign, f.UTMContent, f.CountryCode, f.Device,
				lt.Source, lt.SourceType, lt.EntryPage, lt.UTMSource, lt.UTMMedium, lt.UTMCampaign, lt.UTMContent, lt.CountryCode, lt.Device,
				utc(writtenAt))
		})
}

// ExistingPaymentIDs reports which payment ids ClickHouse already holds.
func (s *Store) ExistingPaymentIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	return existing(ctx, s, "payment ids", ids, "payments", "SELECT payment_id FROM %s WHERE payment_id IN _ids", nil,
		func(r driver.Rows) (id string, err error) { return id, r.Scan(&id) })
}

// VisitorSessions lists the sessions of a visitor that started in [from, to],
// oldest first.
func (s *Store) VisitorSessions(ctx context.Context, site model.SiteID, visitor uint64, from, to time.Time) ([]model.SessionTouch, error) {
	var out []model.SessionTouch
	err := s.collect(ctx, `SELECT started_at, referrer_source, source_type, entry_page, utm_source, utm_medium,
			utm_campaign, utm_content, country_code, device
		FROM sessions WHERE site_key = cityHash64(?) AND visitor_id = ? AND started_at >= ? AND started_at <= ? AND sign = 1
		ORDER BY started_at, session_id LIMIT 1 BY session_id`,
		[]any{string(site), visitor, utc(from), utc(to)}, func(r driver.Rows) error {
			var st model.SessionTouch
			t := &st.Touch
			if err := r.Scan(&st.Start, &t.Source, &t.SourceType, &t.EntryPage, &t.UTMSource, &t.UTMMedium, &t.UTMCampaign,
				&t.UTMContent, &t.CountryCode, &t.Device); err != nil {
				return err
			}
			out = append(out, st)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("chstore: visitor sessions: %w", err)
	}
	return out, nil
}
