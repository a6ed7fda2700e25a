package session

import (
	"bytes"
	"context"
	_ "embed"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/realtime"
)

//go:embed cas.lua
var casLua string

var casScript = redis.NewScript(casLua)

// keysPerCall bounds the states of one HMGET or script call, so that a big
// batch does not hold Redis for long (and a script's arguments fit Lua's
// stack).
const keysPerCall = 2000

// Resolve gives the events of a batch their sessions (see Compute) and
// stores the visitors' new states. persist must store the snapshot durably
// before Resolve writes any state; it may be called again when another
// instance moved a visitor on meanwhile and the batch is computed anew.
//
// snap is nil for a new batch: Resolve reads the states (when Redis cannot
// be read it returns the error, and the batch waits in the log until it
// can). A batch replayed after a restart passes its stored snapshot: states
// it wrote before are in its applied set and not written again. An error
// always means "try again". (A degraded snapshot, of events kept without a
// session, is only what an earlier release may have left in a plan.) The
// realtime view is the caller's to update (MarkActive).
func (m *Manager) Resolve(ctx context.Context, evs []*model.EventRow, snap *Snapshot, persist func(*Snapshot) error) (Outcome, *Snapshot, error) {
	replay := snap != nil
	if err := m.upgrade(ctx); err != nil {
		return Outcome{}, nil, err
	}
	if snap == nil {
		var err error
		if snap, err = m.read(ctx, evs); err != nil {
			return Outcome{}, nil, err
		}
		if err := persist(snap); err != nil {
			return Outcome{}, nil, err
		}
	}
	if snap.Degraded {
		return m.rule.Compute(evs, snap), snap, nil
	}
	for {
		out := m.rule.Compute(evs, snap)
		pending := out.writes
		if replay {
			var err error
			if pending, err = m.unwritten(ctx, pending, snap.Tag); err != nil {
				return Outcome{}, nil, err
			}
		}
		moved, err := m.swap(ctx, snap.Tag, pending)
		if err != nil {
			return Outcome{}, nil, err
		}
		if len(moved) == 0 {
			return out, snap, nil
		}
		// Another instance wrote these visitors' states since they were
		// read: compute the batch again from their new states (the states
		// already written are in the batch's applied set, and skipped). The
		// new snapshot counts only once it is stored: until then the stored
		// one is what a restart would compute from.
		next := snap.clone()
		if err := m.reread(ctx, next, moved); err != nil {
			return Outcome{}, nil, err
		}
		if err := persist(next); err != nil {
			return Outcome{}, nil, err
		}
		snap, replay = next, true
	}
}

// Forget drops the record of which states the batch of snap wrote: call it
// once the batch no longer needs Redis after a restart (its outcome is
// recorded). Best effort: the record expires on its own.
func (m *Manager) Forget(ctx context.Context, snap *Snapshot) {
	if snap != nil && !snap.Degraded {
		m.rdb.Del(ctx, m.appliedKey(snap.Tag))
	}
}

// appliedKey is the set of state keys the batch tagged tag has written.
func (m *Manager) appliedKey(tag uint64) string {
	return m.prefix + "applied:" + strconv.FormatUint(tag, 16)
}

// appliedTTL bounds how long a batch interrupted between writing its
// states and recording its outcome can wait for its replay.
const appliedTTL = 7 * 24 * time.Hour

// read takes the snapshot of a new batch: the states of its visitors, and a
// fresh tag.
func (m *Manager) read(ctx context.Context, evs []*model.EventRow) (*Snapshot, error) {
	seen := map[visitor]bool{}
	var vs []visitor
	for _, ev := range evs {
		v := visitor{ev.SiteID, ev.VisitorID}
		if !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	values, err := m.get(ctx, vs)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Tag: newTag(), States: make([]Stored, len(vs))}
	for i, v := range vs {
		snap.States[i] = Stored{Site: v.site, Visitor: v.id, Value: values[i]}
	}
	return snap, nil
}

// get reads the stored values of vs (nil where there is none). A state's
// value is the one in the newest bucket holding it, so the buckets are read
// newest first, each for the states no newer one held (one HMGET per 2,000
// of them, pipelined), and only the buckets that exist: most states are
// found in the first bucket read, and the next quarter's seldom exists.
func (m *Manager) get(ctx context.Context, vs []visitor) ([][]byte, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	buckets, err := m.existing(ctx, m.buckets(m.now()))
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(vs))
	left := make([]int, len(vs)) // indexes in vs of the states not found yet
	for i := range left {
		left[i] = i
	}
	for _, b := range buckets {
		if len(left) == 0 {
			break
		}
		pipe := m.rdb.Pipeline()
		var cmds []*redis.SliceCmd
		for i := 0; i < len(left); i += keysPerCall {
			chunk := left[i:min(i+keysPerCall, len(left))]
			fields := make([]string, len(chunk))
			for j, k := range chunk {
				fields[j] = vs[k].field()
			}
			cmds = append(cmds, pipe.HMGet(ctx, b, fields...))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmtErr("read states", err)
		}
		still := left[:0]
		for c, cmd := range cmds {
			for j, v := range cmd.Val() {
				k := left[c*keysPerCall+j]
				if s, ok := v.(string); ok {
					out[k] = []byte(s)
				} else {
					still = append(still, k)
				}
			}
		}
		left = still
	}
	return out, nil
}

// existing keeps the buckets that exist, in order.
func (m *Manager) existing(ctx context.Context, buckets []string) ([]string, error) {
	pipe := m.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(buckets))
	for i, b := range buckets {
		cmds[i] = pipe.Exists(ctx, b)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmtErr("read states", err)
	}
	var out []string
	for i, b := range buckets {
		if cmds[i].Val() == 1 {
			out = append(out, b)
		}
	}
	return out, nil
}

// unwritten drops from ws the states the batch tagged tag already wrote
// (before a restart, or before a conflict made it compute again): the
// compare-and-set script adds each state it writes to the batch's applied
// set.
func (m *Manager) unwritten(ctx context.Context, ws []write, tag uint64) ([]write, error) {
	pipe := m.rdb.Pipeline()
	var cmds []*redis.BoolSliceCmd
	for i := 0; i < len(ws); i += keysPerCall {
		chunk := ws[i:min(i+keysPerCall, len(ws))]
		fields := make([]any, len(chunk))
		for j, w := range chunk {
			fields[j] = w.v.field()
		}
		cmds = append(cmds, pipe.SMIsMember(ctx, m.appliedKey(tag), fields...))
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmtErr("read the applied set", err)
	}
	out := ws[:0:0]
	for c, cmd := range cmds {
		for j, written := range cmd.Val() {
			if !written {
				out = append(out, ws[c*keysPerCall+j])
			}
		}
	}
	return out, nil
}

// swap stores each write whose visitor's state still carries the expected
// tag (adding it to the batch's applied set), and returns the visitors whose
// state had moved on.
func (m *Manager) swap(ctx context.Context, tag uint64, ws []write) ([]visitor, error) {
	buckets := m.buckets(m.now())
	life, appliedTTL := int64(m.bucketLife()/time.Second), int64(appliedTTL/time.Second)
	keys := append(buckets, m.appliedKey(tag))
	var moved []visitor
	for i := 0; i < len(ws); i += keysPerCall {
		chunk := ws[i:min(i+keysPerCall, len(ws))]
		args := make([]any, 0, 3+3*len(chunk))
		args = append(args, currentBucket+1, life, appliedTTL)
		for _, w := range chunk {
			args = append(args, w.v.field(), w.expect, w.value)
		}
		idx, err := casScript.Run(ctx, m.rdb, keys, args...).Int64Slice()
		if err != nil {
			return nil, fmtErr("write states", err)
		}
		for _, k := range idx {
			moved = append(moved, chunk[k-1].v)
		}
	}
	return moved, nil
}

// reread replaces the snapshot's states of vs with their current values.
func (m *Manager) reread(ctx context.Context, snap *Snapshot, vs []visitor) error {
	values, err := m.get(ctx, vs)
	if err != nil {
		return err
	}
	now := make(map[visitor][]byte, len(vs))
	for i, v := range vs {
		now[v] = values[i]
	}
	for i, s := range snap.States {
		if value, ok := now[visitor{s.Site, s.Visitor}]; ok && !bytes.Equal(value, s.Value) {
			snap.States[i].Value = value
		}
	}
	return nil
}

// MarkActive shows the visitors of a resolved batch in the realtime view.
// Best effort: a failure only delays the view until the next batch.
func (m *Manager) MarkActive(ctx context.Context, out Outcome) {
	for site, vs := range out.active {
		if err := realtime.Mark(ctx, m.rdb, m.prefix, site, vs); err != nil {
			return
		}
	}
}

func newTag() uint64 {
	for {
		if t := rand.Uint64(); t != 0 {
			return t
		}
	}
}
