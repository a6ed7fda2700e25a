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
	now    func() time.Time
	// upgraded is set once the states an earlier release kept one key
	// each were moved into buckets
	upgraded atomic.Bool
}

// NewManager keeps states under prefix+"sb:" and the realtime keys of the
// realtime package.
func NewManager(rdb redis.Cmdable, prefix string) *Manager {
	return &Manager{rdb: rdb, prefix: prefix, rule: DefaultRule, now: time.Now}
}

// visitor identifies whose session a state is.
type visitor struct {
	site model.SiteID
	id   uint64
}

// field names the visitor's state in a bucket (and in a batch's applied set).
func (v visitor) field() string { return string(v.site) + ":" + formatUint(v.id) }

// States live in time buckets, so that a batch reads and writes the states
// of thousands of visitors in a few Redis commands (a key per state would
// need one SET each, for its expiry). A bucket is a hash of the states
// written in its quarter of an hour (a state stays in a newer bucket once it
// is in one), kept until no reader can need it. A reader looks in every
// bucket that may hold a state written within the state's life (the rule's
// ttl), and in the next one, for instances whose clock runs a little ahead.
const bucketWidth = 15 * time.Minute

// currentBucket is the index, in buckets' answer, of the bucket of now.
const currentBucket = 1

// buckets are the keys of the buckets a state written in the last ttl can
// be in, newest first.
func (m *Manager) buckets(now time.Time) []string {
	w := int64(bucketWidth / time.Second)
	newest := now.Unix()/w + 1
	oldest := now.Add(-m.rule.ttl()).Unix() / w
	keys := make([]string, 0, newest-oldest+1)
	for b := newest; b >= oldest; b-- {
		keys = append(keys, m.prefix+"sb:"+strconv.FormatInt(b, 10))
	}
	return keys
}

// bucketLife is how long a bucket is kept after a write: until a state
// written at its end (or a bucket early) has outlived its ttl.
func (m *Manager) bucketLife() time.Duration { return m.rule.ttl() + 2*bucketWidth }

// ttl is how long Redis keeps a state after its last write (at least): a
// state older than Idle can only end, never continue.
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

// DeleteSites forgets the sessions and the realtime state of sites.
func (m *Manager) DeleteSites(ctx context.Context, sites []model.SiteID) error {
	for _, site := range sites {
		if err := m.deleteSite(ctx, site); err != nil {
			return err
		}
	}
	return nil
}

// deleteSite forgets the sessions and the realtime state of a site.
func (m *Manager) deleteSite(ctx context.Context, site model.SiteID) error {
	if err := realtime.Forget(ctx, m.rdb, m.prefix, site, m.now()); err != nil {
		return fmtErr("delete site", err)
	}
	buckets := m.rdb.Scan(ctx, 0, m.prefix+"sb:*", 1000).Iterator()
	for buckets.Next(ctx) {
		var cursor uint64
		for {
			pairs, next, err := m.rdb.HScan(ctx, buckets.Val(), cursor, string(site)+":*", 1000).Result()
			if err != nil {
				return fmtErr("delete site", err)
			}
			var fields []string
			for i := 0; i+1 < len(pairs); i += 2 { // field, value, field, value…
				fields = append(fields, pairs[i])
			}
			if len(fields) > 0 {
				if err := m.rdb.HDel(ctx, buckets.Val(), fields...).Err(); err != nil {
					return fmtErr("delete site", err)
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return buckets.Err()
}

// upgrade moves the states an earlier release kept one key each
// (prefix+"s:site:visitor") into the current bucket, once per process
// before its first batch, so that visitors in the middle of a visit keep
// their session across an upgrade. A state already in a bucket wins.
func (m *Manager) upgrade(ctx context.Context) error {
	if m.upgraded.Load() {
		return nil
	}
	bucket := m.buckets(m.now())[currentBucket]
	legacy := m.prefix + "s:"
	iter := m.rdb.Scan(ctx, 0, legacy+"*", 1000).Iterator()
	var keys []string
	move := func() error {
		if len(keys) == 0 {
			return nil
		}
		values, err := m.rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return fmtErr("upgrade states", err)
		}
		pipe := m.rdb.Pipeline()
		for i, v := range values {
			if s, ok := v.(string); ok {
				pipe.HSetNX(ctx, bucket, strings.TrimPrefix(keys[i], legacy), s)
			}
		}
		pipe.Expire(ctx, bucket, m.bucketLife())
		pipe.Del(ctx, keys...)
		if _, err := pipe.Exec(ctx); err != nil {
			return fmtErr("upgrade states", err)
		}
		keys = keys[:0]
		return nil
	}
	for iter.Next(ctx) {
		if keys = append(keys, iter.Val()); len(keys) == 1000 {
			if err := move(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmtErr("upgrade states", err)
	}
	if err := move(); err != nil {
		return err
	}
	m.upgraded.Store(true)
	return nil
}

// Compute is the rule's Compute (for a batch whose states were written
// before a restart: its outcome follows from its snapshot alone).
func (m *Manager) Compute(evs []*model.EventRow, snap *Snapshot) Outcome {
	return m.rule.Compute(evs, snap)
}
