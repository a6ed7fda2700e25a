package stats

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
)

// The attribution model comes from attribution, or from the deprecated
// model, whose last_touch always meant the last non-direct touch; both may
// be given when they agree.
func TestParseRevenueAttribution(t *testing.T) {
	base := "site_id=s&date_from=2026-05-01&date_to=2026-05-07&"
	for _, tc := range []struct {
		query     string
		want      string // the model, or "" for an error
		wantField string
	}{
		{"", LastNonDirect, ""},
		{"attribution=last_non_direct", LastNonDirect, ""},
		{"attribution=last_touch", LastTouch, ""},
		{"attribution=first_touch", FirstTouch, ""},
		{"model=last_touch", LastNonDirect, ""},
		{"model=first_touch", FirstTouch, ""},
		{"model=last_touch&attribution=last_non_direct", LastNonDirect, ""},
		{"model=first_touch&attribution=first_touch", FirstTouch, ""},
		{"attribution=linear", "", "attribution"},
		{"attribution=Last_Touch", "", "attribution"},
		{"attribution=last_touch&model=last_touch", "", "attribution"}, // model's last_touch is last_non_direct
		{"attribution=first_touch&model=last_touch", "", "attribution"},
		{"model=last_non_direct", "", "model"}, // the deprecated parameter keeps its two values
		{"model=linear&attribution=first_touch", "", "model"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			v, err := url.ParseQuery(base + tc.query)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseRequest(v, Endpoint{Revenue: true})
			if tc.want == "" {
				var e *errs.Error
				if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != tc.wantField {
					t.Fatalf("err %v, want invalid field %s", err, tc.wantField)
				}
				return
			}
			if err != nil || r.Attribution != tc.want {
				t.Fatalf("attribution %q, err %v; want %q", r.Attribution, err, tc.want)
			}
		})
	}
}

// Each model reads its own attribution columns, for breakdowns and filters.
func TestRevenueColumnsByModel(t *testing.T) {
	for model, want := range map[string][2]string{
		LastNonDirect: {"source", "utm_campaign"},
		LastTouch:     {"lt_source", "lt_utm_campaign"},
		FirstTouch:    {"ft_source", "ft_utm_campaign"},
	} {
		fs, err := paymentFilters([]Filter{Eq(UTMCampaign, "spring")}, model)
		if err != nil {
			t.Fatal(err)
		}
		from := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		q := Query{Table: Payments, Site: "s", From: from, To: from.AddDate(0, 0, 1),
			Dimensions: []Dimension{RevenueBy("source", model)}, Metrics: []Metric{Revenue}, Filters: fs}
		sql, args, err := q.Build()
		if err != nil {
			t.Fatal(err)
		}
		wantSQL := "SELECT toString(multiIf(attributed = 0, ?, " + want[0] + " = '', ?, " + want[0] + ")) AS d0, " +
			"toFloat64(sumIf(base_amount, kind = 'payment')) AS m0 FROM payments " +
			"WHERE site_key = cityHash64(?) AND ts >= ? AND ts < ? AND " + want[1] + " = ? GROUP BY d0"
		if sql != wantSQL {
			t.Errorf("%s:\n got %s\nwant %s", model, sql, wantSQL)
		}
		if len(args) < 2 || args[0] != UnattributedLabel || args[1] != NoneLabel {
			t.Errorf("%s: arguments %v, want the labels first", model, args)
		}
	}
}

// Revenue per visitor and the paying visitor rate, computed by hand.
func TestRevenueSummary(t *testing.T) {
	for _, tc := range []struct {
		name     string
		totals   RevenueTotals
		visitors int64
		want     RevenueSummary
	}{
		// 10000 − 2500 = 7500 net over 3 visitors: 2500 each; 1 of 3 paid: 33.33… → 33.3
		{"thirds", RevenueTotals{Revenue: 10000, Refunds: 2500, Net: 7500, PayingVisitors: 1}, 3,
			RevenueSummary{Visitors: 3, RevenuePerVisitor: 2500, PayingVisitorRate: 33.3}},
		// 1000 / 3 = 333.333… → 333.33 minor units; 2 of 3 = 66.66… → 66.7
		{"rounded", RevenueTotals{Revenue: 1000, Net: 1000, PayingVisitors: 2}, 3,
			RevenueSummary{Visitors: 3, RevenuePerVisitor: 333.33, PayingVisitorRate: 66.7}},
		// 2 / 3 = 0.666… → 0.67 of a minor unit; 1 of 3 = 33.3
		{"small", RevenueTotals{Revenue: 2, Net: 2, PayingVisitors: 1}, 3,
			RevenueSummary{Visitors: 3, RevenuePerVisitor: 0.67, PayingVisitorRate: 33.3}},
		// 1 of 8 = 12.5 exactly; 999 / 8 = 124.875 → 124.88
		{"eighths", RevenueTotals{Revenue: 999, Net: 999, PayingVisitors: 1}, 8,
			RevenueSummary{Visitors: 8, RevenuePerVisitor: 124.88, PayingVisitorRate: 12.5}},
		// refunds above revenue: −500 / 4 = −125
		{"negative net", RevenueTotals{Revenue: 500, Refunds: 1000, Net: -500, PayingVisitors: 1}, 4,
			RevenueSummary{Visitors: 4, RevenuePerVisitor: -125, PayingVisitorRate: 25}},
		// payments without any visitor in the range (renewals): nothing to divide by
		{"no visitors", RevenueTotals{Revenue: 4900, Net: 4900, PayingVisitors: 1}, 0,
			RevenueSummary{Visitors: 0, RevenuePerVisitor: 0, PayingVisitorRate: 0}},
		// two paying visitors, one visited: 2 / 1 × 100 = 200, not capped
		{"renewals", RevenueTotals{Revenue: 3000, Net: 3000, PayingVisitors: 2}, 1,
			RevenueSummary{Visitors: 1, RevenuePerVisitor: 3000, PayingVisitorRate: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.RevenueTotals = tc.totals
			if diff := cmp.Diff(tc.want, revenueSummary(tc.totals, tc.visitors)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The revenue report filters by what a payment knows of its visit (source,
// channel, UTM parameters, country, device) and refuses the other filters, naming
// each, as the README says.
func TestRevenueFilters(t *testing.T) {
	refused := map[string]bool{"pathname": true, "hostname": true, "region": true, "city": true, "browser": true, "os": true,
		"browser_version": true, "os_version": true}
	values := map[string]string{"pathname": "/a", "country": "US", "region": "US-CA", "device": "Mobile", "channel": "Email"}
	for _, p := range FilterParams {
		v := values[p.Param]
		if v == "" {
			v = "x"
		}
		fs, err := ParseFilters(url.Values{p.Param: {v}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = paymentFilters(fs, LastNonDirect)
		var e *errs.Error
		switch {
		case refused[p.Param] && (!errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != p.Param):
			t.Errorf("%s: %v; want it refused, naming %s", p.Param, err, p.Param)
		case !refused[p.Param] && err != nil:
			t.Errorf("%s: %v; want it applied", p.Param, err)
		}
	}
}
