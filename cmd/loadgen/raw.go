package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/model"
)

// rawResult is the raw insert baseline: the rows tally stored for the batch
// phase, inserted again with the same clickhouse-go batch code tally uses
// (chstore), in batches of rawBatch rows, with nothing else in the way.
type rawResult struct {
	Events, Sessions     int
	EventsTook, BothTook time.Duration
}

const rawBatch = 10_000

func (r rawResult) eventsRate() float64 { return float64(r.Events) / r.EventsTook.Seconds() }

// bothRate is events per second when each event's session rows are
// inserted too, as tally's flusher does.
func (r rawResult) bothRate() float64 { return float64(r.Events) / r.BothTook.Seconds() }

// rawInsert reads up to limit events (and their sessions' rows) of site back
// from ClickHouse and times inserting them into a scratch database.
func rawInsert(ctx context.Context, opts chstore.Options, site string, limit int) (rawResult, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{opts.Addr},
		Auth:        clickhouse.Auth{Database: opts.Database, Username: opts.User, Password: opts.Password},
		ReadTimeout: 5 * time.Minute})
	if err != nil {
		return rawResult{}, err
	}
	defer conn.Close()
	events, err := readEvents(ctx, conn, site, limit)
	if err != nil {
		return rawResult{}, err
	}
	sessions, err := readSessions(ctx, conn, site, 2*len(events))
	if err != nil {
		return rawResult{}, err
	}

	scratch := opts
	scratch.Database = opts.Database + "_raw"
	if err := chstore.DropDatabase(ctx, opts, scratch.Database); err != nil {
		return rawResult{}, err
	}
	store, err := chstore.Open(ctx, scratch)
	if err != nil {
		return rawResult{}, err
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		return rawResult{}, err
	}
	res := rawResult{Events: len(events), Sessions: len(sessions)}
	start := time.Now()
	for i := 0; i < len(events); i += rawBatch {
		if err := store.InsertEvents(ctx, events[i:min(i+rawBatch, len(events))]); err != nil {
			return res, err
		}
	}
	res.EventsTook = time.Since(start)
	// events and sessions, as the flusher writes them: each batch of events
	// with the session rows of the same share
	start = time.Now()
	per := float64(len(sessions)) / float64(max(1, len(events)))
	for i := 0; i < len(events); i += rawBatch {
		j := min(i+rawBatch, len(events))
		if err := store.InsertEvents(ctx, events[i:j]); err != nil {
			return res, err
		}
		a, b := int(float64(i)*per), min(int(float64(j)*per), len(sessions))
		if err := store.InsertSessions(ctx, sessions[a:b]); err != nil {
			return res, err
		}
	}
	res.BothTook = time.Since(start)
	return res, chstore.DropDatabase(ctx, opts, scratch.Database)
}

func readEvents(ctx context.Context, conn driver.Conn, site string, limit int) ([]model.EventRow, error) {
	rows, err := conn.Query(ctx, `SELECT site_id, ts, event_id, name, visitor_id, session_id, hostname, pathname,
		prev_pathname, time_on_prev, referrer, referrer_source, source_type, utm_source, utm_medium, utm_campaign,
		utm_content, utm_term, device, browser, browser_version, os, os_version, country_code, region_code,
		region_name, city, props_keys, props_values, revenue_amount, revenue_currency
		FROM events WHERE site_id = ? LIMIT ?`, site, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []model.EventRow
	for rows.Next() {
		var r model.EventRow
		var siteID string
		a := &r.Attribution
		if err := rows.Scan(&siteID, &r.Timestamp, &r.EventID, &r.Name, &r.VisitorID, &r.SessionID, &a.Hostname,
			&r.Pathname, &r.PrevPathname, &r.TimeOnPrev, &a.Referrer, &a.ReferrerSource, &a.SourceType, &a.UTMSource,
			&a.UTMMedium, &a.UTMCampaign, &a.UTMContent, &a.UTMTerm, &a.Device, &a.Browser, &a.BrowserVersion, &a.OS,
			&a.OSVersion, &a.CountryCode, &a.RegionCode, &a.RegionName, &a.City, &r.PropKeys, &r.PropValues,
			&r.RevenueAmount, &r.RevenueCurrency); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		r.SiteID = model.SiteID(siteID)
		out = append(out, r)
	}
	return out, rows.Err()
}

func readSessions(ctx context.Context, conn driver.Conn, site string, limit int) ([]model.SessionRow, error) {
	rows, err := conn.Query(ctx, `SELECT site_id, session_id, visitor_id, sign, version, started_at, ended_at,
		pageviews, events, is_bounce, entry_page, exit_page, hostname, referrer, referrer_source, source_type,
		utm_source, utm_medium, utm_campaign, utm_content, utm_term, device, browser, browser_version, os, os_version,
		country_code, region_code, region_name, city
		FROM sessions WHERE site_id = ? LIMIT ?`, site, limit)
	if err != nil {
		return nil, fmt.Errorf("read sessions: %w", err)
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
			return nil, fmt.Errorf("read sessions: %w", err)
		}
		r.SiteID, r.IsBounce = model.SiteID(siteID), bounce == 1
		out = append(out, r)
	}
	return out, rows.Err()
}
