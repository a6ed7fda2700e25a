// Package realtime answers "who is on the site right now" from Redis, so
// that every API instance sees the same visitors. The write buffer marks the
// visitors of each batch active (Mark) in a hash per site and minute:
// visitor → the second it was last seen in that minute, its current page and
// source. A reader takes each visitor's latest value in the minutes the
// window covers; a minute's hash expires once no window reaches it.
//
// A hash per minute costs Redis an HSET per visitor and batch. A single
// sorted set of every visitor's last-seen time, trimmed as batches arrive,
// cost it several times that (a sorted-set update, a score lookup and the
// trimming per visitor).
package realtime

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tally-analytics/tally/internal/model"
)

// Window is how far back "now" reaches (spec: 5 minutes).
const Window = 5 * time.Minute

// maxRows caps the current pages and sources lists.
const maxRows = 100

// minute is the width of a hash of visitors.
const minute = int64(time.Minute / time.Second)

// life is how long a minute's hash is kept after its last write: until the
// window has passed its end, with a minute to spare for instances whose
// clocks differ.
const life = Window + 2*time.Minute

// ahead is how many minutes past its own a reader looks into, for instances
// whose clocks run a little ahead.
const ahead = 1

// minuteOf is the unix minute of the unix second at.
func minuteOf(at int64) int64 {
	m := at / minute
	if at%minute < 0 {
		m-- // before 1970: round down, not toward zero
	}
	return m
}

// key is the hash of site's visitors seen in the minute m (unix minutes).
func key(prefix string, site model.SiteID, m int64) string {
	return prefix + "rt:" + string(site) + ":m:" + strconv.FormatInt(m, 10)
}

// Keys are the hashes of site that a reader at now may read, oldest first.
func Keys(prefix string, site model.SiteID, now time.Time) []string {
	first, last := minuteOf(now.Add(-Window).Unix()), minuteOf(now.Unix())+ahead
	keys := make([]string, 0, last-first+1)
	for m := first; m <= last; m++ {
		keys = append(keys, key(prefix, site, m))
	}
	return keys
}

// Forget deletes site's realtime state: the hashes any reader from now on
// could read (older ones are never read again and expire), and the keys of
// an earlier release.
func Forget(ctx context.Context, rdb redis.Cmdable, prefix string, site model.SiteID, now time.Time) error {
	base := prefix + "rt:" + string(site)
	keys := []string{base + ":seen", base + ":current"}
	for m := minuteOf(now.Add(-Window).Unix()); m <= minuteOf(now.Unix())+ahead+1; m++ {
		keys = append(keys, key(prefix, site, m))
	}
	if err := rdb.Del(ctx, keys...).Err(); err != nil {
		return fmt.Errorf("realtime: forget: %w", err)
	}
	return nil
}

// Separator splits the page from the source in the hashes' values.
const Separator = "\n"

//go:embed mark.lua
var markLua string

var markScript = redis.NewScript(markLua)

// Active is a visitor of a batch, to be shown as active.
type Active struct {
	Visitor      uint64
	Seen         time.Time // the visitor's latest event
	Page, Source string
}

// Mark records visitors of site as active, in one script call per minute
// of their last-seen times and 2,000 visitors (chunks keep Redis
// responsive).
func Mark(ctx context.Context, rdb redis.Scripter, prefix string, site model.SiteID, visitors []Active) error {
	byMinute := map[int64][]any{}
	for _, v := range visitors {
		at := v.Seen.Unix()
		m := minuteOf(at)
		second := at - m*minute
		byMinute[m] = append(byMinute[m], strconv.FormatUint(v.Visitor, 10),
			fmt.Sprintf("%02d ", second)+v.Page+Separator+v.Source)
	}
	ttl := int64(life / time.Second)
	for m, pairs := range byMinute {
		keys := []string{key(prefix, site, m)}
		for len(pairs) > 0 {
			n := min(len(pairs), 2*2000)
			args := append(make([]any, 0, 1+n), ttl)
			args = append(args, pairs[:n]...)
			if err := markScript.Run(ctx, rdb, keys, args...).Err(); err != nil {
				return fmt.Errorf("realtime: mark: %w", err)
			}
			pairs = pairs[n:]
		}
	}
	return nil
}

// Reader reads the realtime state.
type Reader struct {
	rdb    redis.Cmdable
	prefix string
}

// NewReader reads keys under prefix.
func NewReader(rdb redis.Cmdable, prefix string) *Reader { return &Reader{rdb: rdb, prefix: prefix} }

// Active counts the visitors seen in the window before now, by current page
// and by source: each visitor's latest value in the minutes of the window.
func (r *Reader) Active(ctx context.Context, site model.SiteID, now time.Time) (model.Realtime, error) {
	keys := Keys(r.prefix, site, now)
	pipe := r.rdb.Pipeline()
	reads := make([]*redis.MapStringStringCmd, len(keys))
	for i, k := range keys {
		reads[i] = pipe.HGetAll(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return model.Realtime{}, fmt.Errorf("realtime: read: %w", err)
	}
	type latest struct {
		seen  int64
		value string
	}
	since := now.Add(-Window).Unix()
	first := minuteOf(since)
	visitors := map[string]latest{}
	for i, read := range reads {
		base := (first + int64(i)) * minute
		for id, value := range read.Val() {
			second, rest, ok := strings.Cut(value, " ")
			s, err := strconv.ParseInt(second, 10, 64)
			if !ok || err != nil {
				continue // not a value Mark writes
			}
			seen := base + s
			if seen < since {
				continue
			}
			if was, ok := visitors[id]; !ok || was.seen <= seen {
				visitors[id] = latest{seen, rest}
			}
		}
	}
	pages, sources := map[string]int64{}, map[string]int64{}
	for _, v := range visitors {
		page, source, _ := strings.Cut(v.value, Separator)
		pages[page]++
		sources[source]++
	}
	return model.Realtime{Visitors: int64(len(visitors)), Pages: top(pages), Sources: top(sources)}, nil
}

// AtMost is a bound from above on the visitors Active would count: the
// entries of the window's hashes, a visitor seen in two minutes counted
// twice. It reads their lengths only (HLEN), so that a check for a count
// far above a site's (a spike notification's threshold) reads no visitor.
func (r *Reader) AtMost(ctx context.Context, site model.SiteID, now time.Time) (int64, error) {
	keys := Keys(r.prefix, site, now)
	pipe := r.rdb.Pipeline()
	lens := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		lens[i] = pipe.HLen(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return 0, fmt.Errorf("realtime: read: %w", err)
	}
	var n int64
	for _, l := range lens {
		n += l.Val()
	}
	return n, nil
}

// top sorts by count descending, then name, and keeps maxRows (nil when m
// is empty).
func top(m map[string]int64) []model.VisitorCount {
	if len(m) == 0 {
		return nil
	}
	out := make([]model.VisitorCount, 0, len(m))
	for k, n := range m {
		out = append(out, model.VisitorCount{Value: k, Visitors: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Visitors != out[j].Visitors {
			return out[i].Visitors > out[j].Visitors
		}
		return out[i].Value < out[j].Value
	})
	if len(out) > maxRows {
		out = out[:maxRows]
	}
	return out
}
