package chstore

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/model"
)

// EventRows reads up to limit stored events of site back (the benchmark
// re-inserts them as its raw insert baseline).
func (s *Store) EventRows(ctx context.Context, site model.SiteID, limit int) ([]model.EventRow, error) {
	rows, err := s.conn.Query(ctx, `SELECT site_id, ts, event_id, name, visitor_id, stable_visitor, session_id, hostname, pathname,
		prev_pathname, time_on_prev, referrer, referrer_source, source_type, utm_source, utm_medium, utm_campaign,
		utm_content, utm_term, device, browser, browser_version, os, os_version, country_code, region_code,
		region_name, city, props_keys, props_values, revenue_amount, revenue_currency
		FROM events WHERE site_id = ? LIMIT ?`, string(site), limit)
	if err != nil {
		return nil, fmt.Errorf("chstore: event rows: %w", err)
	}
	defer rows.Close()
	var out []model.EventRow
	for rows.Next() {
		var r model.EventRow
		var siteID string
		var stable uint8
		a := &r.Attribution
		if err := rows.Scan(&siteID, &r.Timestamp, &r.EventID, &r.Name, &r.VisitorID, &stable, &r.SessionID, &a.Hostname,
			&r.Pathname, &r.PrevPathname, &r.TimeOnPrev, &a.Referrer, &a.ReferrerSource, &a.SourceType, &a.UTMSource,
			&a.UTMMedium, &a.UTMCampaign, &a.UTMContent, &a.UTMTerm, &a.Device, &a.Browser, &a.BrowserVersion, &a.OS,
			&a.OSVersion, &a.CountryCode, &a.RegionCode, &a.RegionName, &a.City, &r.PropKeys, &r.PropValues,
			&r.RevenueAmount, &r.RevenueCurrency); err != nil {
			return nil, fmt.Errorf("chstore: event rows: %w", err)
		}
		r.SiteID, r.StableVisitor = model.SiteID(siteID), stable == 1
		out = append(out, r)
	}
	return out, rows.Err()
}

// SessionRows reads up to limit stored session rows of site back.
func (s *Store) SessionRows(ctx context.Context, site model.SiteID, limit int) ([]model.SessionRow, error) {
	rows, err := s.conn.Query(ctx, `SELECT site_id, session_id, visitor_id, sign, version, started_at, ended_at,
		pageviews, events, is_bounce, entry_page, exit_page, hostname, referrer, referrer_source, source_type,
		utm_source, utm_medium, utm_campaign, utm_content, utm_term, device, browser, browser_version, os, os_version,
		country_code, region_code, region_name, city
		FROM sessions WHERE site_id = ? LIMIT ?`, string(site), limit)
	if err != nil {
		return nil, fmt.Errorf("chstore: session rows: %w", err)
	}
	defer rows.Close()
	var out []model.SessionRow
	for rows.Next() {
		var r model.SessionRow
		var siteID string
		var bounce uint8
		a := &r.Attribution
		if err := rows.Scan(&siteID, &r.SessionID, &r.VisitorID, &r.Sign, &r.Version, &r.Start, &r.End, &r.Pageviews,
			&r.Events, &bounce, &r.EntryPage, &r.ExitPage, &a.Hostname, &a.Referrer, &a.ReferrerSource, &a.SourceType,
			&a.UTMSource, &a.UTMMedium, &a.UTMCampaign, &a.UTMContent, &a.UTMTerm, &a.Device, &a.Browser,
			&a.BrowserVersion, &a.OS, &a.OSVersion, &a.CountryCode, &a.RegionCode, &a.RegionName, &a.City); err != nil {
			return nil, fmt.Errorf("chstore: session rows: %w", err)
		}
		r.SiteID, r.IsBounce = model.SiteID(siteID), bounce == 1
		out = append(out, r)
	}
	return out, rows.Err()
}

// PathCounts counts the stored events of site by path (the fault soak gives
// every event a path of its own, and looks for each).
func (s *Store) PathCounts(ctx context.Context, table string, site model.SiteID) (map[string]int64, error) {
	if table != "events" && table != "engagements" {
		return nil, fmt.Errorf("chstore: path counts: unknown table %q", table)
	}
	counts := map[string]int64{}
	err := s.collect(ctx, "SELECT pathname, toInt64(count()) FROM "+table+" WHERE site_id = ? GROUP BY pathname", []any{string(site)},
		func(r driver.Rows) error {
			var path string
			var n int64
			if err := r.Scan(&path, &n); err != nil {
				return err
			}
			counts[path] = n
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("chstore: path counts: %w", err)
	}
	return counts, nil
}
