package chstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/model"
)

// The raw export's queries select the site by site_key, which the table is
// ordered by, and by site_id too: a collision of the hash can never put
// another site's events in an export.
const exportSiteCondition = "site_key = cityHash64(?) AND site_id = ? AND ts >= ? AND ts < ?"

// exportBlockRows is the size of the blocks ClickHouse sends an export in:
// what the driver holds at a time is a few such blocks.
const exportBlockRows = 8192

// EventHours counts the events of site in [from, to) by hour (UTC), in
// order, leaving out hours without any.
func (s *Store) EventHours(ctx context.Context, site model.SiteID, from, to time.Time) ([]export.HourCount, error) {
	var out []export.HourCount
	err := s.collect(ctx, "SELECT toUInt64(intDiv(toUInt32(ts), 3600)) AS hour, toUInt64(count()) FROM events WHERE "+
		exportSiteCondition+" GROUP BY hour ORDER BY hour", exportArgs(site, from, to),
		func(r driver.Rows) error {
			var hour, n uint64
			if err := r.Scan(&hour, &n); err != nil {
				return err
			}
			out = append(out, export.HourCount{Start: time.Unix(int64(hour)*3600, 0).UTC(), Events: int64(n)})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("chstore: event hours: %w", err)
	}
	return out, nil
}

// StreamEvents hands fn the events of site in [from, to) ordered by time,
// then event id, row by row as the driver reads them: fn gets the same row
// each time, filled anew. An error of fn stops the query and is returned
// as it is.
func (s *Store) StreamEvents(ctx context.Context, site model.SiteID, from, to time.Time, fn func(*model.EventRow) error) error {
	ctx = clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_block_size": exportBlockRows}))
	ctx, cancel := context.WithCancel(ctx)
	rows, err := s.conn.Query(ctx, `SELECT event_id, ts, name, pathname, hostname, referrer, referrer_source,
		source_type, utm_source, utm_medium, utm_campaign, utm_content, utm_term, device, browser, browser_version,
		os, os_version, country_code, region_code, region_name, city, props_keys, props_values, revenue_amount,
		revenue_currency, session_id, visitor_id
		FROM events WHERE `+exportSiteCondition+` ORDER BY ts, event_id`, exportArgs(site, from, to)...)
	if err != nil {
		cancel()
		return fmt.Errorf("chstore: export events: %w", translate(err))
	}
	defer rows.Close()
	defer cancel() // first: a stream stopped early is not read to its end by Close
	var r model.EventRow
	a := &r.Attribution
	dest := []any{&r.EventID, &r.Timestamp, &r.Name, &r.Pathname, &a.Hostname, &a.Referrer, &a.ReferrerSource,
		&a.SourceType, &a.UTMSource, &a.UTMMedium, &a.UTMCampaign, &a.UTMContent, &a.UTMTerm, &a.Device, &a.Browser,
		&a.BrowserVersion, &a.OS, &a.OSVersion, &a.CountryCode, &a.RegionCode, &a.RegionName, &a.City, &r.PropKeys,
		&r.PropValues, &r.RevenueAmount, &r.RevenueCurrency, &r.SessionID, &r.VisitorID}
	r.SiteID = site
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("chstore: export events: %w", err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chstore: export events: %w", translate(err))
	}
	return nil
}

func exportArgs(site model.SiteID, from, to time.Time) []any {
	return []any{string(site), string(site), from.UTC(), to.UTC()}
}
