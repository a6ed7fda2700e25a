// Package session turns the events of a write-buffer batch into visits: it
// applies the session rule to each visitor's events, in order, starting from
// the visitor's live state in Redis (so that every API instance continues the
// same sessions), and gives the ClickHouse sessions table one cancel row for
// each session's state before the batch and one row for its new state.
//
// The rule (30 minutes of inactivity end a session, none lasts more than 24
// hours; entry and exit pages, bounces, the previous page and the time spent
// on it) lives only here, in Go: Redis stores states and swaps them with a
// compare-and-set, it decides nothing.
//
// A batch goes through Resolve in three steps that make it exact across
// crashes: read the visitors' states (the Snapshot), hand the snapshot to the
// caller to store durably, then write the new states, each only if the
// visitor's state is still the one read. The outcome is a pure function of
// the batch and its snapshot (Compute), so a batch interrupted anywhere
// replays to the same rows, and a state written before a crash is found in
// the batch's applied set (which the compare-and-set keeps) rather than
// written twice.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
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

// Rule decides when an event continues its visitor's session.
type Rule struct {
	Idle   time.Duration // inactivity that ends a session
	MaxAge time.Duration // no session lasts longer
}

// DefaultRule is the rule of the spec: 30 minutes idle, 24 hours at most.
var DefaultRule = Rule{Idle: DefaultIdle, MaxAge: DefaultMaxAge}

// Manager resolves sessions against the live states in Redis.
type Manager struct {
	rdb    redis.Cmdable
	prefix string
	rule   Rule
}

// NewManager keeps states under prefix+"s:" and the realtime keys of the
// realtime package.
func NewManager(rdb redis.Cmdable, prefix string) *Manager {
	return &Manager{rdb: rdb, prefix: prefix, rule: DefaultRule}
}

// visitor identifies whose session a state is.
type visitor struct {
	site model.SiteID
	id   uint64
}

func (m *Manager) key(v visitor) string {
	return m.prefix + "s:" + string(v.site) + ":" + formatUint(v.id)
}

// ttl is how long Redis keeps a state after its last write: a state older
// than Idle can only end, never continue.
func (r Rule) ttl() time.Duration { return r.Idle + time.Minute }

// sessionID is the id of the session an event starts: a hash of the event's
// id, so that computing a batch twice gives the same sessions. 0 means "no
// session" and is never returned.
func sessionID(eventID string) uint64 {
	sum := sha256.Sum256([]byte(eventID))
	if id := binary.LittleEndian.Uint64(sum[:8]); id != 0 {
		return id
	}
	return 1
}

// DeleteSite forgets the sessions and the realtime state of a site.
func (m *Manager) DeleteSite(ctx context.Context, site model.SiteID) error {
	seen, current := realtime.Keys(m.prefix, site)
	if err := m.rdb.Del(ctx, seen, current).Err(); err != nil {
		return fmtErr("delete site", err)
	}
	iter := m.rdb.Scan(ctx, 0, m.prefix+"s:"+string(site)+":*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := m.rdb.Del(ctx, iter.Val()).Err(); err != nil {
			return fmtErr("delete site", err)
		}
	}
	return iter.Err()
}

// Compute is the rule's Compute (for a batch whose states were written
// before a restart: its outcome follows from its snapshot alone).
func (m *Manager) Compute(evs []*model.EventRow, snap *Snapshot) Outcome {
	return m.rule.Compute(evs, snap)
}
