package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Prop filters select the visits with an event that carries the prop's
// value, in every report that reads visits and events (the week of
// eventPropertiesSite, in UTC).
func TestPropFilters(t *testing.T) {
	_, c, site := eventPropertiesSite(t)
	ctx := context.Background()
	week := func(props map[string]string) client.StatsParams {
		return client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", Timezone: "UTC", Props: props}
	}
	overview := func(p client.StatsParams) api.Metrics {
		t.Helper()
		res, err := c.Overview(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return res.Data.Metrics
	}
	for _, tc := range []struct {
		name     string
		p        client.StatsParams
		visitors int64
	}{
		// ann, ben, cat and gus sent a Signup with plan pro; each visit viewed one page
		{"plan pro", week(map[string]string{"plan": "pro"}), 4},
		{"plan free", week(map[string]string{"plan": "free"}), 1}, // dan (hal's is before the week)
		// a number as stored: ann's first Signup had seats 3 and plan pro
		{"plan pro and seats 3", week(map[string]string{"plan": "pro", "seats": "3"}), 1},
		{"a value nobody sent", week(map[string]string{"plan": "team"}), 0},
		// ann's Download had plan x: a prop of any event
		{"plan x", week(map[string]string{"plan": "x"}), 1},
	} {
		if m := overview(tc.p); m.Visitors != tc.visitors || m.Pageviews != tc.visitors {
			t.Errorf("%s: %d visitors, %d pageviews; want %d and %d", tc.name, m.Visitors, m.Pageviews, tc.visitors, tc.visitors)
		}
	}
	// beside a filter of the visit: cat is the GB visitor with a coupon
	p := week(map[string]string{"coupon": "spring"})
	p.Country = "GB"
	if m := overview(p); m.Visitors != 1 {
		t.Errorf("coupon spring in GB: %d visitors, want 1", m.Visitors)
	}

	// the events of the four plan-pro visits: ann's 2 Signups and Download,
	// ben's, cat's and gus's Signups; 4 visitors in the filtered range
	events, err := c.Events(ctx, week(map[string]string{"plan": "pro"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []api.EventRow{
		{EventName: "Signup", TotalCount: 5, UniqueVisitors: 4, ConversionRate: 125},
		{EventName: "Download", TotalCount: 1, UniqueVisitors: 1, ConversionRate: 25},
	}
	if diff := cmp.Diff(want, events.Data.Events); diff != "" {
		t.Errorf("events of the plan-pro visits (-want +got):\n%s", diff)
	}

	// a report that cannot take them says which
	rp := week(map[string]string{"plan": "pro"})
	_, err = c.Revenue(ctx, rp)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "props[plan]")
	rp.FunnelID = "00000000-0000-0000-0000-000000000000"
	_, err = c.FunnelReport(ctx, rp)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "props[plan]")
}

func TestPropFilterRefusals(t *testing.T) {
	h := newHarness(t)
	week := func(kv ...string) url.Values {
		q := url.Values{"site_id": {string(h.siteID)}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}}
		for i := 0; i < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		return q
	}
	long := strings.Repeat("k", 51)
	for _, tc := range []struct {
		q     url.Values
		field string
	}{
		{week("props[]", "x"), "props[]"},
		{week("props[plan]", ""), "props[plan]"},
		{week("props[plan", "pro"), "props[plan"},
		{week("props["+long+"]", "1"), "props[" + long + "]"},
		{week("props[plan]", strings.Repeat("v", 2001)), "props[plan]"},
		{week("props[a]", "1", "props[b]", "2", "props[c]", "3", "props[d]", "4"), "props"},
	} {
		status, e := get(t, h, h.key, "/api/v1/stats/overview", tc.q)
		if status != http.StatusBadRequest || e.Error.Field != tc.field {
			t.Errorf("%v: %d %+v, want 400 on %s", tc.q, status, e.Error, tc.field)
		}
	}
	// three are fine, and 2,000 characters
	q := week("props[a]", "1", "props[b]", "2", "props[c]", strings.Repeat("v", 2000))
	if status, e := get(t, h, h.key, "/api/v1/stats/overview", q); status != http.StatusOK {
		t.Errorf("three prop filters: %d %+v", status, e.Error)
	}
	// what takes no filters refuses them, as it refuses the others
	for _, path := range []string{"/api/v1/export/events", "/api/v1/stats/ingestion"} {
		status, e := get(t, h, h.key, path, week("props[plan]", "pro"))
		if status != http.StatusBadRequest || e.Error.Field != "props[plan]" {
			t.Errorf("%s with a prop filter: %d %+v, want 400 on props[plan]", path, status, e.Error)
		}
	}
}
