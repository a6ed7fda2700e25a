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
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
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
	rdb    redis.Cmdable
	prefix string
	idle   time.Duration
	maxAge time.Duration
	// loaded is set once Redis is known to hold touch.lua.
	loaded atomic.Bool
}

// NewManager uses keys under prefix: prefix+"s:" for sessions, and the
// realtime package's keys.
func NewManager(rdb redis.Cmdable, prefix string) *Manager {
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
	res := m.TouchMany(ctx, []Event{ev})
	return res[0].Update, res[0].Err
}

// Touched is the outcome of one event of TouchMany.
type Touched struct {
	Update Update
	Err    error
}

// TouchMany applies events in order, in one round trip to Redis (a
// pipeline of script calls), and returns one outcome per event.
func (m *Manager) TouchMany(ctx context.Context, evs []Event) []Touched {
	out := make([]Touched, len(evs))
	cmds, err := m.run(ctx, evs, !m.loaded.Load())
	if isNoScript(err) {
		// Redis lost its script cache (a restart): load it and run again.
		// A NOSCRIPT call changed nothing, so running it again is safe.
		cmds, err = m.run(ctx, evs, true)
	}
	if err == nil {
		m.loaded.Store(true)
	}
	for i, ev := range evs {
		if cmds == nil {
			out[i].Err = fmt.Errorf("session: touch: %w", err)
			continue
		}
		res, err := cmds[i].Slice()
		if err != nil {
			out[i].Err = fmt.Errorf("session: touch: %w", err)
			continue
		}
		out[i].Update, out[i].Err = decodeUpdate(ev, res)
	}
	return out
}

// run sends one script call per event in a pipeline, preceded by SCRIPT
// LOAD when load is set. It returns the calls, or nil and the error when the
// pipeline failed as a whole (or any call met NOSCRIPT). A single event goes
// as a plain call: on an auto-pipelining client it then shares a round trip
// with the commands of concurrent requests.
func (m *Manager) run(ctx context.Context, evs []Event, load bool) ([]*redis.Cmd, error) {
	if len(evs) == 1 && !load {
		keys, args, err := m.args(evs[0])
		if err != nil {
			return nil, err
		}
		cmd := m.rdb.EvalSha(ctx, touchScript.Hash(), keys, args...)
		if err := cmd.Err(); err != nil && (isNoScript(err) || !errors.As(err, new(redis.Error))) {
			return nil, err
		}
		return []*redis.Cmd{cmd}, nil
	}
	pipe := m.rdb.Pipeline()
	if load {
		pipe.ScriptLoad(ctx, touchLua)
	}
	cmds := make([]*redis.Cmd, len(evs))
	for i, ev := range evs {
		keys, args, err := m.args(ev)
		if err != nil {
			return nil, err
		}
		cmds[i] = pipe.EvalSha(ctx, touchScript.Hash(), keys, args...)
	}
	_, err := pipe.Exec(ctx)
	if err == nil {
		return cmds, nil
	}
	for _, c := range cmds {
		if isNoScript(c.Err()) {
			return nil, c.Err()
		}
	}
	if errors.As(err, new(redis.Error)) {
		return cmds, nil // a reply error of some call: reported per event
	}
	return nil, err
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// args are the keys and arguments of touch.lua for ev.
func (m *Manager) args(ev Event) ([]string, []any, error) {
	attrs := model.AppendAttribution([]byte{attributionV1}, ev.Attribution)
	pv := "0"
	if ev.Pageview {
		pv = "1"
	}
	visitor := strconv.FormatUint(ev.Visitor, 10)
	key := m.prefix + "s:" + string(ev.Site) + ":" + visitor
	seen, current := realtime.Keys(m.prefix, ev.Site)
	ttl := int64((m.idle + time.Minute) / time.Second)
	return []string{key, seen, current}, []any{
		ev.Time.Unix(), int64(m.idle / time.Second), int64(m.maxAge / time.Second), pv, ev.Path,
		strconv.FormatUint(ev.NewSessionID, 10), string(attrs), ttl, ev.Attribution.ReferrerSource, visitor,
		int64(realtime.Window / time.Second)}, nil
}

// decodeUpdate turns the script's reply {previous, now} into rows: the new
// state follows from the previous one (or none) by the rule of touch.lua.
func decodeUpdate(ev Event, res []any) (Update, error) {
	if len(res) != 2 {
		return Update{}, fmt.Errorf("session: touch: unexpected reply of %d elements", len(res))
	}
	now, ok := res[1].(int64)
	if !ok {
		return Update{}, fmt.Errorf("session: touch: unexpected time %T", res[1])
	}
	var prev *state
	if res[0] != nil {
		p, err := decodeState(res[0])
		if err != nil {
			return Update{}, err
		}
		prev = &p
	}
	next := nextState(ev, prev, now)
	u := Update{State: next.row(ev.Site, ev.Visitor, 1)}
	if prev != nil {
		cancel := prev.row(ev.Site, ev.Visitor, -1)
		u.Cancel = &cancel
		if ev.Pageview && prev.lastPageview > 0 {
			u.PrevPath = prev.exit
			u.TimeOnPrev = uint32(max(0, next.last-prev.lastPageview))
		}
	}
	return u, nil
}

// nextState is the session after ev at now: prev continued, or a new
// session when prev is nil (the same rule as touch.lua's writes).
func nextState(ev Event, prev *state, now int64) state {
	s := state{sid: ev.NewSessionID, start: now, attribution: ev.Attribution}
	if prev != nil {
		s = *prev
	}
	s.version++
	s.last = now
	if ev.Pageview {
		s.pageviews++
		if s.entry == "" {
			s.entry = ev.Path
		}
		s.exit, s.lastPageview = ev.Path, now
	} else {
		s.events++
	}
	return s
}

func (s state) row(site model.SiteID, visitor uint64, sign int8) model.SessionRow {
	return model.SessionRow{
		SiteID: site, SessionID: s.sid, VisitorID: visitor, Sign: sign, Version: s.version,
		Start: time.Unix(s.start, 0).UTC(), End: time.Unix(s.last, 0).UTC(),
		Pageviews: s.pageviews, Events: s.events, IsBounce: s.pageviews == 1 && s.events == 0,
		EntryPage: s.entry, ExitPage: s.exit, Attribution: s.attribution,
	}
}

// decodeState reads the previous state of touch.lua's reply (its fields
// sid, start, last, ver, pv, ev, entry, exit, lpv, attrs, src).
func decodeState(v any) (state, error) {
	f, ok := v.([]any)
	if !ok || len(f) != 11 {
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
	if s.attribution, err = decodeAttribution(str(9)); err != nil {
		return state{}, fmt.Errorf("session: bad attribution: %w", err)
	}
	return s, nil
}

// attributionV1 starts a session's attribution in Redis: model's binary
// encoding follows. Sessions started before it hold JSON.
const attributionV1 = 1

// decodeAttribution reads a session's attribution.
func decodeAttribution(s string) (model.Attribution, error) {
	if strings.HasPrefix(s, string(rune(attributionV1))) {
		return model.DecodeAttribution([]byte(s[1:]))
	}
	var a model.Attribution
	err := json.Unmarshal([]byte(s), &a)
	return a, err
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
