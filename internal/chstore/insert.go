package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

const attributionColumns = "referrer, referrer_source, source_type, utm_source, utm_medium, utm_campaign, " +
	"utm_content, utm_term, device, browser, browser_version, os, os_version, country_code, region_code, region_name, city"

func attributionValues(a model.Attribution) []any {
	return []any{a.Referrer, a.ReferrerSource, a.SourceType, a.UTMSource, a.UTMMedium, a.UTMCampaign,
		a.UTMContent, a.UTMTerm, a.Device, a.Browser, a.BrowserVersion, a.OS, a.OSVersion,
		a.CountryCode, a.RegionCode, a.RegionName, a.City}
}

// utc truncates to the second in UTC: DateTime has second precision.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// InsertEvents writes event rows in one batch.
func (s *Store) InsertEvents(ctx context.Context, rows []model.EventRow) error {
	return s.insert(ctx, "events", "INSERT INTO events (site_id, ts, event_id, name, visitor_id, session_id, hostname, "+
		"pathname, prev_pathname, time_on_prev, "+attributionColumns+", props_keys, props_values, revenue_amount, revenue_currency)",
		len(rows), func(b driver.Batch, i int) error {
			r := rows[i]
			vals := []any{string(r.SiteID), utc(r.Timestamp), r.EventID, r.Name, r.VisitorID, r.SessionID,
				r.Attribution.Hostname, r.Pathname, r.PrevPathname, r.TimeOnPrev}
			vals = append(vals, attributionValues(r.Attribution)...)
			vals = append(vals, nonNil(r.PropKeys), nonNil(r.PropValues), r.RevenueAmount, r.RevenueCurrency)
			return b.Append(vals...)
		})
}

// InsertSessions writes session state and cancel rows in one batch.
func (s *Store) InsertSessions(ctx context.Context, rows []model.SessionRow) error {
	return s.insert(ctx, "sessions", "INSERT INTO sessions (site_id, session_id, visitor_id, sign, version, started_at, "+
		"ended_at, duration, pageviews, events, is_bounce, entry_page, exit_page, hostname, "+attributionColumns+")",
		len(rows), func(b driver.Batch, i int) error {
			r := rows[i]
			var bounce uint8
			if r.IsBounce {
				bounce = 1
			}
			vals := []any{string(r.SiteID), r.SessionID, r.VisitorID, r.Sign, r.Version, utc(r.Start), utc(r.End),
				r.Duration(), r.Pageviews, r.Events, bounce, r.EntryPage, r.ExitPage, r.Attribution.Hostname}
			return b.Append(append(vals, attributionValues(r.Attribution)...)...)
		})
}

// InsertBotEvents writes filtered bot traffic in one batch.
func (s *Store) InsertBotEvents(ctx context.Context, rows []model.BotEventRow) error {
	return s.insert(ctx, "bot_events", "INSERT INTO bot_events (site_id, ts, event_id, reason)",
		len(rows), func(b driver.Batch, i int) error {
			r := rows[i]
			return b.Append(string(r.SiteID), utc(r.Timestamp), r.EventID, r.Reason)
		})
}

func (s *Store) insert(ctx context.Context, table, stmt string, n int, appendRow func(driver.Batch, int) error) error {
	if n == 0 {
		return nil
	}
	return s.timed("insert_"+table, func() error {
		batch, err := s.conn.PrepareBatch(ctx, stmt)
		if err != nil {
			return fmt.Errorf("chstore: insert %s: prepare: %w", table, err)
		}
		for i := range n {
			if err := appendRow(batch, i); err != nil {
				batch.Abort() //nolint:errcheck // the append error is the one to report
				return fmt.Errorf("chstore: insert %s: append: %w", table, err)
			}
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("chstore: insert %s: send: %w", table, err)
		}
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
