// Package realtime answers "who is on the site right now" from Redis, so
// that every API instance sees the same visitors. The write buffer marks the
// visitors of each batch active (Mark) in two keys per site: a sorted set of
// visitor → last seen (unix seconds) and a hash of visitor → current page
// and source. Entries older than the window are trimmed as batches arrive.
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

// Keys are the Redis keys of a site's realtime state.
func Keys(prefix string, site model.SiteID) (seen, current string) {
	base := prefix + "rt:" + string(site)
	return base + ":seen", base + ":current"
}

// Separator splits the page from the source in the current hash's values.
const Separator = "\n"

//go:embed snapshot.lua
var snapshotLua string

var snapshotScript = redis.NewScript(snapshotLua)

//go:embed mark.lua
var markLua string

var markScript = redis.NewScript(markLua)

// Active is a visitor of a batch, to be shown as active.
type Active struct {
	Visitor      uint64
	Seen         time.Time // the visitor's latest event
	Page, Source string
}

// Mark records visitors of site as active, in one script call per 2,000
// visitors (chunks keep Redis responsive).
func Mark(ctx context.Context, rdb redis.Scripter, prefix string, site model.SiteID, visitors []Active) error {
	seen, current := Keys(prefix, site)
	latest := int64(0)
	for _, v := range visitors {
		latest = max(latest, v.Seen.Unix())
	}
	for len(visitors) > 0 {
		n := min(len(visitors), 2000)
		args := make([]any, 0, 2+3*n)
		args = append(args, int64(Window/time.Second), latest)
		for _, v := range visitors[:n] {
			args = append(args, strconv.FormatUint(v.Visitor, 10), v.Seen.Unix(), v.Page+Separator+v.Source)
		}
		if err := markScript.Run(ctx, rdb, []string{seen, current}, args...).Err(); err != nil {
			return fmt.Errorf("realtime: mark: %w", err)
		}
		visitors = visitors[n:]
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
// and by source.
func (r *Reader) Active(ctx context.Context, site model.SiteID, now time.Time) (model.Realtime, error) {
	seen, current := Keys(r.prefix, site)
	vals, err := snapshotScript.Run(ctx, r.rdb, []string{seen, current}, now.Add(-Window).Unix()).StringSlice()
	if err != nil && err != redis.Nil {
		return model.Realtime{}, fmt.Errorf("realtime: snapshot: %w", err)
	}
	pages, sources := map[string]int64{}, map[string]int64{}
	var active int64
	for _, v := range vals {
		if v == "" {
			continue // trimmed between the two reads
		}
		page, source, _ := strings.Cut(v, Separator)
		active++
		pages[page]++
		sources[source]++
	}
	return model.Realtime{Visitors: active, Pages: top(pages), Sources: top(sources)}, nil
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
