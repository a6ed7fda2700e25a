// Package session keeps the live state of every visitor's session in Redis,
// so that all API instances agree on it, and turns each event into the rows
// the ClickHouse sessions table needs: a cancel row for the previous state and
// the new state.
//
// The rule that decides whether an event continues a session (30 minutes of
// inactivity ends one, none lasts more than 24 hours) runs inside one Lua
// script, so concurrent events of a visitor on different instances update the
// state atomically in a single round trip.
package session

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
)

// Defaults of the session rule.
const (
	DefaultIdle   = 30 * time.Minute
	DefaultMaxAge = 24 * time.Hour
)

//go:embed touch.lua
var touchLua string

var touchScript = redis.NewScript(touchLua)

// Event is what the session rule needs to know about an event.
type Event struct {
	Site     model.SiteID
	Visitor  uint64
	Time     time.Time
	Pageview bool
	Path     string
	// Attribution is recorded when this event starts a session.
	Attribution model.Attribution
	// NewSessionID is used when this event starts a session.
	NewSessionID uint64
}

// Update is the outcome of an event for its session.
type Update struct {
	// Cancel is the previous state, to be written again with sign -1; nil
	// when the event started a new session.
	Cancel *model.SessionRow
	// State is the new state, to be written with sign +1.
	State model.SessionRow
	// PrevPath and TimeOnPrev describe the previous pageview of the session
	// when this event is a later pageview: where the visitor was and for how
	// many seconds.
	PrevPath   string
	TimeOnPrev uint32
}

// Manager keeps session state in Redis.
type Manager struct {
	rdb    *redis.Client
	prefix string
	idle   time.Duration
	maxAge time.Duration
}

// NewManager uses keys under prefix: prefix+"s:" for sessions, and the
// realtime package's keys.
func NewManager(rdb *redis.Client, prefix string) *Manager {
	return &Manager{rdb: rdb, prefix: prefix, idle: DefaultIdle, maxAge: DefaultMaxAge}
}

// state is the session as the Lua script stores it (field order of touch.lua).
type state struct {
	sid               uint64
	start, last       int64
	version           uint32
	pageviews, events uint32
	entry, exit       string
	lastPageview      int64
	attribution       model.Attribution
}

// Touch applies an event to its visitor's session and returns the rows to write.
func (m *Manager) Touch(ctx context.Context, ev Event) (Update, error) {
	attrs, err := json.Marshal(ev.Attribution)
	if err != nil {
		return Update{}, fmt.Errorf("session: encode attribution: %w", err)
	}
	pv := "0"
	if ev.Pageview {
		pv = "1"
	}
	visitor := strconv.FormatUint(ev.Visitor, 10)
	key := m.prefix + "s:" + string(ev.Site) + ":" + visitor
	seen, current := realtime.Keys(m.prefix, ev.Site)
	ttl := int64((m.idle + time.Minute) / time.Second)
	res, err := touchScript.Run(ctx, m.rdb, []string{key, seen, current},
		ev.Time.Unix(), int64(m.idle/time.Second), int64(m.maxAge/time.Second), pv, ev.Path,
		strconv.FormatUint(ev.NewSessionID, 10), string(attrs), ttl, ev.Attribution.ReferrerSource, visitor,
		int64(realtime.Window/time.Second)).Slice()
	if err != nil {
		return Update{}, fmt.Errorf("session: touch: %w", err)
	}
	if len(res) != 2 {
		return Update{}, fmt.Errorf("session: touch: unexpected reply of %d elements", len(res))
	}
	next, err := decodeState(res[1])
	if err != nil {
		return Update{}, err
	}
	u := Update{State: next.row(ev.Site, ev.Visitor, 1)}
	if res[0] != nil {
		prev, err := decodeState(res[0])
		if err != nil {
			return Update{}, err
		}
		cancel := prev.row(ev.Site, ev.Visitor, -1)
		u.Cancel = &cancel
		if ev.Pageview && prev.lastPageview > 0 {
			u.PrevPath = prev.exit
			u.TimeOnPrev = uint32(max(0, next.last-prev.lastPageview))
		}
	}
	return u, nil
}

func (s state) row(site model.SiteID, visitor uint64, sign int8) model.SessionRow {
	return model.SessionRow{
		SiteID: site, SessionID: s.sid, VisitorID: visitor, Sign: sign, Version: s.version,
		Start: time.Unix(s.start, 0).UTC(), End: time.Unix(s.last, 0).UTC(),
		Pageviews: s.pageviews, Events: s.events, IsBounce: s.pageviews == 1 && s.events == 0,
		EntryPage: s.entry, ExitPage: s.exit, Attribution: s.attribution,
	}
}

func decodeState(v any) (state, error) {
	f, ok := v.([]any)
	if !ok || len(f) != 10 {
		return state{}, fmt.Errorf("session: unexpected state %T", v)
	}
	str := func(i int) string { s, _ := f[i].(string); return s }
	num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
	var s state
	var err error
	if s.sid, err = strconv.ParseUint(str(0), 10, 64); err != nil {
		return state{}, fmt.Errorf("session: bad session id: %w", err)
	}
	s.start, s.last = num(1), num(2)
	s.version, s.pageviews, s.events = uint32(num(3)), uint32(num(4)), uint32(num(5))
	s.entry, s.exit = str(6), str(7)
	s.lastPageview = num(8)
	if err := json.Unmarshal([]byte(str(9)), &s.attribution); err != nil {
		return state{}, fmt.Errorf("session: bad attribution: %w", err)
	}
	return s, nil
}

// DeleteSite forgets the sessions and the realtime state of a site.
func (m *Manager) DeleteSite(ctx context.Context, site model.SiteID) error {
	seen, current := realtime.Keys(m.prefix, site)
	if err := m.rdb.Del(ctx, seen, current).Err(); err != nil {
		return fmt.Errorf("session: delete site: %w", err)
	}
	iter := m.rdb.Scan(ctx, 0, m.prefix+"s:"+string(site)+":*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := m.rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return fmt.Errorf("session: delete site: %w", err)
		}
	}
	return iter.Err()
}
