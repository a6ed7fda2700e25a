package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

// A report without rows answers empty lists, never null.
func TestEmptyListsAreLists(t *testing.T) {
	for name, res := range map[string]any{
		"overview": Overview(stats.Overview{}), "pages": Pages(stats.Pages{}), "sources": Sources(stats.List[stats.SourceRow]{}),
		"campaigns": Campaigns(stats.Campaigns{}), "entry-pages": EntryPages(stats.List[stats.EntryRow]{}),
		"exit-pages": ExitPages(stats.List[stats.ExitRow]{}), "devices": Devices(stats.List[stats.Share]{}),
		"browsers": Browsers(stats.List[stats.Share]{}), "operating-systems": OperatingSystems(stats.List[stats.Share]{}),
		"countries": Countries(stats.List[stats.Share]{}), "regions": Regions(stats.List[stats.Share]{}),
		"cities": Cities(stats.List[stats.Share]{}), "events": Events(stats.List[stats.EventRow]{}),
		"realtime": Realtime(stats.Realtime{}), "ingestion": Ingestion(stats.Ingestion{}),
		"conversions": Conversions(stats.Conversions{}), "revenue": Revenue(stats.RevenueReport{}),
		"funnel": Funnel(stats.FunnelReport{}), "event-properties": EventProperties(stats.EventProperties{}),
		"event-properties?property": EventProperties(stats.EventProperties{Property: "plan"}), "journeys": Journeys(stats.Journeys{}),
	} {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "null") {
			t.Errorf("%s: %s", name, b)
		}
	}
}

// The overview in its wire shape: dates as the API writes them, the bot
// events in all and by category, the comparison when there is one.
func TestOverview(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 5, d, 0, 0, 0, 0, time.UTC) }
	up := 50.0
	o := stats.Overview{
		Meta:    stats.Meta{Site: "s1", From: day(2), To: day(3), Timezone: "Asia/Tokyo", Sampled: true},
		Metrics: stats.Metrics{Visitors: 3, Pageviews: 5, BounceRate: 33.3, VisitDuration: 12.5},
		Series:  []stats.DayCount{{Date: day(2), Visitors: 1, Pageviews: 2}, {Date: day(3), Visitors: 2, Pageviews: 3}},
		Comparison: &stats.Comparison{From: day(1), To: day(1), Metrics: stats.Metrics{Visitors: 2},
			Series: []stats.DayCount{{Date: day(1), Visitors: 2}}, Change: stats.Change{Visitors: &up, BounceRate: 33.3}},
		Bots: stats.BotTraffic{Crawler: 2, Other: 1},
	}
	want := api.OverviewResponse{
		Data: api.Overview{Metrics: api.Metrics{Visitors: 3, Pageviews: 5, BounceRate: 33.3, VisitDuration: 12.5},
			Timeseries: []api.TimeseriesPoint{{Date: "2026-05-02", Visitors: 1, Pageviews: 2}, {Date: "2026-05-03", Visitors: 2, Pageviews: 3}},
			Comparison: &api.Comparison{DateFrom: "2026-05-01", DateTo: "2026-05-01", Metrics: api.Metrics{Visitors: 2},
				Timeseries: []api.TimeseriesPoint{{Date: "2026-05-01", Visitors: 2}}, Change: api.Change{Visitors: &up, BounceRate: 33.3}}},
		Meta: api.OverviewMeta{StatsMeta: api.StatsMeta{SiteID: "s1", DateFrom: "2026-05-02", DateTo: "2026-05-03",
			Timezone: "Asia/Tokyo", Sampled: true}, FilteredBotTraffic: 3, FilteredBotTrafficByCategory: api.BotTraffic{Crawler: 2, Other: 1}},
	}
	if diff := cmp.Diff(want, Overview(o)); diff != "" {
		t.Errorf("overview (-want +got):\n%s", diff)
	}
}

// Rows keep their order and every field finds its column.
func TestRows(t *testing.T) {
	shares := stats.List[stats.Share]{Rows: []stats.Share{{Value: "GB", Name: "United Kingdom", Visitors: 3, Percentage: 75},
		{Value: "ZZ", Name: "Unknown", Visitors: 1, Percentage: 25}}}
	if diff := cmp.Diff([]api.CountryRow{{CountryCode: "GB", CountryName: "United Kingdom", Visitors: 3, Percentage: 75},
		{CountryCode: "ZZ", CountryName: "Unknown", Visitors: 1, Percentage: 25}}, Countries(shares).Data.Countries); diff != "" {
		t.Errorf("countries (-want +got):\n%s", diff)
	}
	conv := stats.Conversions{Visitors: 4, Goals: []stats.GoalConversion{{Goal: model.Goal{ID: "g1", Name: "Signup", Type: model.GoalCustomEvent},
		Completions: 3, Converters: 2, Rate: 75, VisitorRate: 50, PrevRate: 0}}}
	got := Conversions(conv)
	if diff := cmp.Diff([]api.Conversion{{GoalID: "g1", GoalName: "Signup", GoalType: "custom_event", TotalConversions: 3,
		UniqueVisitors: 2, ConversionRate: 75, VisitorConversionRate: 50}}, got.Data); diff != "" || got.Meta.TotalUniqueVisitors != 4 {
		t.Errorf("conversions %d visitors (-want +got):\n%s", got.Meta.TotalUniqueVisitors, diff)
	}
	rt := Realtime(stats.Realtime{Realtime: model.Realtime{Visitors: 2, Pages: []model.VisitorCount{{Value: "/a", Visitors: 2}}}})
	if rt.Data.ActiveVisitors != 2 || len(rt.Data.CurrentPages) != 1 || rt.Data.CurrentPages[0].Pathname != "/a" {
		t.Errorf("realtime %+v", rt.Data)
	}
}
