package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
)

// BenchmarkCompute is the session rule over a batch of 10,000 events of
// 7,000 visitors, half of them with a state from an earlier batch.
func BenchmarkCompute(b *testing.B) {
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	attr := model.Attribution{ReferrerSource: "Google", SourceType: "search", UTMSource: "news", Device: "desktop", Browser: "Chrome"}
	var evs []*model.EventRow
	for i := range 10_000 {
		v := uint64(i % 7_000)
		evs = append(evs, &model.EventRow{SiteID: "s1", Timestamp: t0.Add(time.Duration(i) * time.Millisecond), EventID: fmt.Sprint("e", i),
			Name: "pageview", VisitorID: v, Pathname: fmt.Sprint("/page/", i%50), Attribution: attr})
	}
	snap := &Snapshot{Tag: 7}
	for v := range uint64(7_000) {
		st := Stored{Site: "s1", Visitor: v}
		if v%2 == 0 {
			st.Value = appendStored(nil, stored{tag: 3, state: state{sid: v + 1, start: t0.Unix() - 60, last: t0.Unix() - 30,
				version: 2, pageviews: 2, entry: "/", exit: "/pricing", lastPageview: t0.Unix() - 30, attribution: &attr}})
		}
		snap.States = append(snap.States, st)
	}
	b.ReportAllocs()
	for b.Loop() {
		out := DefaultRule.Compute(evs, snap)
		if len(out.Events) != len(evs) {
			b.Fatal(len(out.Events))
		}
	}
}
