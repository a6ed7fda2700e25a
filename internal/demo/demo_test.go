package demo_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/demo"
	"github.com/tally-analytics/tally/internal/ingest"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/revenue"
)

// memSink keeps what a load writes.
type memSink struct {
	events   []model.EventRow
	sessions []model.SessionRow
	bots     []model.BotEventRow
	// engagements are the scroll depths reported
	engagements []model.EngagementRow
}

func (m *memSink) InsertEvents(_ context.Context, _ string, rows []model.EventRow) error {
	m.events = append(m.events, rows...)
	return nil
}

func (m *memSink) InsertSessions(_ context.Context, _ string, rows []model.SessionRow) error {
	m.sessions = append(m.sessions, rows...)
	return nil
}

func (m *memSink) InsertBotEvents(_ context.Context, _ string, rows []model.BotEventRow) error {
	m.bots = append(m.bots, rows...)
	return nil
}

func (m *memSink) InsertEngagements(_ context.Context, _ string, rows []model.EngagementRow) error {
	m.engagements = append(m.engagements, rows...)
	return nil
}

// memPayments keeps the payments a load records, in the order recorded.
type memPayments struct {
	mu sync.Mutex
	in []revenue.Incoming
}

func (m *memPayments) Record(_ context.Context, in revenue.Incoming) (revenue.Recorded, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.in = append(m.in, in)
	return revenue.Recorded{Payment: model.Payment{Attribution: &model.PaymentAttribution{}}}, nil
}

func (m *memPayments) Export(context.Context) (int, error) { return 0, nil }

const site = model.SiteID("demosite0001")

var end = time.Date(2026, 5, 31, 15, 4, 5, 0, time.UTC)

func load(t *testing.T, opts demo.Options) (*memSink, *memPayments, demo.Result) {
	t.Helper()
	sink, pay := &memSink{}, &memPayments{}
	opts.Site, opts.End = site, end
	res, err := demo.Load(context.Background(), demo.Stores{Events: sink, Payments: pay}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sink, pay, res
}

// The shared load of the tests that only read it.
var shared = sync.OnceValues(func() (*memSink, *memPayments) {
	sink, pay := &memSink{}, &memPayments{}
	if _, err := demo.Load(context.Background(), demo.Stores{Events: sink, Payments: pay},
		demo.Options{Site: site, End: end, Events: 150_000, Seed: 1}); err != nil {
		panic(err)
	}
	return sink, pay
})

func TestEventCountAndSpan(t *testing.T) {
	sink, _, res := load(t, demo.Options{Events: 20_000, Days: 7, Seed: 5, Batch: 3000})
	if res.Events != len(sink.events) || res.Events < 20_000 || res.Events > 20_000+500 {
		t.Errorf("result says %d events, %d written, want about 20,000", res.Events, len(sink.events))
	}
	if res.Sessions != len(sink.sessions) || res.Visitors == 0 || res.Visitors >= res.Sessions {
		t.Errorf("result says %d sessions of %d visitors, %d written", res.Sessions, res.Visitors, len(sink.sessions))
	}
	// the whole days of the last 7 days and today's part, as the dashboard's "last 7 days"
	start, firstDay := time.Date(2026, 5, 25, 0, 0, 0, 0, time.UTC), 0
	for _, e := range sink.events {
		if e.Timestamp.Before(start) || !e.Timestamp.Before(end) {
			t.Fatalf("event at %s, outside [%s, %s)", e.Timestamp, start, end)
		}
		if e.Timestamp.Before(start.Add(24 * time.Hour)) {
			firstDay++
		}
		if e.SiteID != site || e.Attribution.Hostname != "example.com" || e.EventID == "" {
			t.Fatalf("event %+v: wrong site, host or id", e)
		}
	}
	if firstDay < res.Events/20 {
		t.Errorf("%d of %d events on the first day", firstDay, res.Events)
	}
	reasons := map[string]int{}
	for _, b := range sink.bots {
		if b.Timestamp.Before(start) || !b.Timestamp.Before(end) || b.SiteID != site {
			t.Fatalf("bot event %+v outside the span or the site", b)
		}
		reasons[model.BotCategory(b.Reason)]++
	}
	if res.BotEvents != len(sink.bots) || len(sink.bots) < res.Events/50 || len(reasons) != 5 {
		t.Errorf("%d bot events (result: %d) by category %v, want a few per 100 events, of every category",
			len(sink.bots), res.BotEvents, reasons)
	}
}

func TestSameSeedSameTraffic(t *testing.T) {
	a, pa, _ := load(t, demo.Options{Events: 5000, Seed: 9})
	b, pb, _ := load(t, demo.Options{Events: 5000, Seed: 9})
	if diff := cmp.Diff(a.events, b.events); diff != "" {
		t.Fatalf("the same seed gave other events (-first +second):\n%.2000s", diff)
	}
	if diff := cmp.Diff(a.sessions, b.sessions); diff != "" {
		t.Fatalf("the same seed gave other sessions (-first +second):\n%.2000s", diff)
	}
	byTxn := func(in []revenue.Incoming) []revenue.Incoming {
		return slices.SortedFunc(slices.Values(in), func(x, y revenue.Incoming) int {
			return strings.Compare(x.Provider+x.TransactionID+string(x.Kind), y.Provider+y.TransactionID+string(y.Kind))
		})
	}
	if diff := cmp.Diff(byTxn(pa.in), byTxn(pb.in)); diff != "" {
		t.Fatalf("the same seed gave other payments (-first +second):\n%.2000s", diff)
	}
	c, _, _ := load(t, demo.Options{Events: 5000, Seed: 10})
	if c.events[0].EventID == a.events[0].EventID || c.events[0].VisitorID == a.events[0].VisitorID {
		t.Error("another seed gave the same first event")
	}
	// with or without payments, the traffic is the same
	sink := &memSink{}
	if _, err := demo.Generate(context.Background(), sink, demo.Options{Site: site, End: end, Events: 5000, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.events, sink.events); diff != "" {
		t.Fatalf("recording payments changed the traffic (-with +without):\n%.2000s", diff)
	}
}

// A visitor keeps their device, browser, system and place on every visit,
// and many come back on other days.
func TestVisitorsKeepWhoTheyAre(t *testing.T) {
	sink, _ := shared()
	type who struct{ device, browser, version, os, country, region, city string }
	whoOf := func(a model.Attribution) who {
		return who{a.Device, a.Browser, a.BrowserVersion, a.OS, a.CountryCode, a.RegionCode, a.City}
	}
	seen := map[uint64]who{}
	days := map[uint64]map[string]bool{}
	for _, s := range sink.sessions {
		w := whoOf(s.Attribution)
		if before, ok := seen[s.VisitorID]; ok && before != w {
			t.Fatalf("visitor %d came as %+v, then as %+v", s.VisitorID, before, w)
		}
		seen[s.VisitorID] = w
		if days[s.VisitorID] == nil {
			days[s.VisitorID] = map[string]bool{}
		}
		days[s.VisitorID][s.Start.Format(time.DateOnly)] = true
	}
	for _, e := range sink.events {
		if w, ok := seen[e.VisitorID]; !ok || w != whoOf(e.Attribution) {
			t.Fatalf("event of visitor %d as %+v, their sessions as %+v", e.VisitorID, whoOf(e.Attribution), w)
		}
	}
	returning := 0
	for _, d := range days {
		if len(d) > 1 {
			returning++
		}
	}
	if share := float64(returning) / float64(len(days)); share < 0.08 || share > 0.5 {
		t.Errorf("%.1f%% of %d visitors came back on another day, want 8–50%%", 100*share, len(days))
	}
}

// Bounce rate, time on page and conversion depend on the page and the source.
func TestBehaviourDependsOnPageAndSource(t *testing.T) {
	sink, _ := shared()
	type rate struct{ n, hits int }
	pct := func(r rate) float64 { return 100 * float64(r.hits) / float64(max(r.n, 1)) }
	bounce := map[string]rate{}  // by campaign
	signups := map[string]rate{} // by entry section
	bySession := map[uint64]bool{}
	for _, e := range sink.events {
		if e.Name == "signup" {
			bySession[e.SessionID] = true
		}
	}
	for _, s := range sink.sessions {
		b := bounce[s.Attribution.UTMCampaign]
		b.n++
		if s.IsBounce {
			b.hits++
		}
		bounce[s.Attribution.UTMCampaign] = b
		entry := s.EntryPage
		if strings.HasPrefix(entry, "/blog/") {
			entry = "/blog/*"
		}
		c := signups[entry]
		c.n++
		if bySession[s.SessionID] {
			c.hits++
		}
		signups[entry] = c
	}
	if paid, letter := pct(bounce["spring-sale"]), pct(bounce["weekly-digest"]); paid < letter+20 {
		t.Errorf("bounce rate: paid social %.0f%%, newsletter %.0f%%; want the paid campaign 20 points higher", paid, letter)
	}
	if pricing, posts := pct(signups["/pricing"]), pct(signups["/blog/*"]); pricing < 3*posts || pricing < 2 {
		t.Errorf("sign-ups: %.1f%% of visits entering on /pricing, %.1f%% on blog posts; want pricing three times as many",
			pricing, posts)
	}
	stay := map[string]rate{} // seconds on the page, by page
	for _, e := range sink.events {
		if e.PrevPathname != "" {
			s := stay[e.PrevPathname]
			s.n++
			s.hits += int(e.TimeOnPrev)
			stay[e.PrevPathname] = s
		}
	}
	avg := func(path string) float64 { return float64(stay[path].hits) / float64(max(stay[path].n, 1)) }
	if docs, home := avg("/docs/getting-started"), avg("/"); docs < 4*home {
		t.Errorf("time on page: %.0f s on /docs/getting-started, %.0f s on /; want the docs four times as long", docs, home)
	}
}

// Custom events carry props; every goal of the demo has conversions.
func TestCustomEventsCarryProps(t *testing.T) {
	sink, _ := shared()
	names := map[string]int{}
	for _, e := range sink.events {
		if e.Pageview() {
			continue
		}
		names[e.Name]++
		if len(e.PropKeys) == 0 || len(e.PropKeys) != len(e.PropValues) || slices.Contains(e.PropValues, "") {
			t.Fatalf("custom event %s has props %v = %v", e.Name, e.PropKeys, e.PropValues)
		}
	}
	for _, name := range []string{"signup", "checkout_started", "copy_snippet", "download", "newsletter_subscribe", "outbound_click"} {
		if names[name] == 0 {
			t.Errorf("no %s events (have %v)", name, names)
		}
	}
}

// Payments come from all four providers, with renewals, refunds of earlier
// payments, failed attempts and several currencies; a checkout's payment
// names a visitor who visited before it.
func TestPaymentsFromEveryProvider(t *testing.T) {
	sink, pay := shared()
	firstVisit := map[uint64]time.Time{}
	for _, s := range sink.sessions {
		if t0, ok := firstVisit[s.VisitorID]; !ok || s.Start.Before(t0) {
			firstVisit[s.VisitorID] = s.Start
		}
	}
	refs := map[string]bool{}
	kinds := map[string]map[model.PaymentKind]int{}
	currencies := map[string]bool{}
	subs := map[string]int{}
	withVisit, withVisitor := 0, 0
	for i, in := range pay.in {
		if kinds[in.Provider] == nil {
			kinds[in.Provider] = map[model.PaymentKind]int{}
		}
		kinds[in.Provider][in.Kind]++
		currencies[in.Currency] = true
		if in.Amount <= 0 || in.TransactionID == "" || in.OccurredAt.After(end) || in.Site.ID != site {
			t.Fatalf("payment %d: %+v", i, in)
		}
		switch in.Kind {
		case model.KindPayment:
			refs[in.Provider+" "+in.PaymentRef] = true
			if in.SubscriptionID != "" {
				subs[in.SubscriptionID]++
			}
			if in.ClientVisitorID != "" && in.CheckoutSession != "" { // a checkout's payment, not a renewal
				withVisitor++
				if t0, ok := firstVisit[ingest.FromClientID(site, in.ClientVisitorID)]; ok && t0.Before(in.OccurredAt) {
					withVisit++
				}
			}
		case model.KindRefund:
			if !refs[in.Provider+" "+in.RefundOf] {
				t.Errorf("refund %s of %s names %q, not a payment recorded before it", in.TransactionID, in.Provider, in.RefundOf)
			}
		}
	}
	for _, p := range []model.Provider{model.ProviderA, model.ProviderB, model.ProviderC, model.ProviderD} {
		if kinds[string(p)][model.KindPayment] == 0 {
			t.Errorf("no payments from %s (have %v)", p, kinds)
		}
	}
	refunds, failed := 0, 0
	for _, k := range kinds {
		refunds += k[model.KindRefund]
		failed += k[model.KindFailed]
	}
	if refunds == 0 || failed == 0 {
		t.Errorf("%d refunds and %d failed attempts, want some of each", refunds, failed)
	}
	if len(currencies) < 3 {
		t.Errorf("payments in %v, want several currencies", currencies)
	}
	if withVisitor == 0 || withVisit != withVisitor {
		t.Errorf("%d of %d checkouts naming a visitor follow a visit of theirs", withVisit, withVisitor)
	}
	_, _, res := load(t, demo.Options{Events: 40_000, Seed: 2})
	total := 0
	for _, n := range res.Payments {
		total += n
	}
	if res.Renewals == 0 || res.Renewals >= total || res.Refunds == 0 || len(res.Currencies) < 3 {
		t.Errorf("result: %d payments %v, %d renewals, %d refunds, currencies %v", total, res.Payments, res.Renewals,
			res.Refunds, res.Currencies)
	}
}

// Past MaxPayments, a sample of whole payments is recorded: a refund only
// with its payment.
func TestMaxPayments(t *testing.T) {
	_, pay, res := load(t, demo.Options{Events: 40_000, Seed: 3, MaxPayments: 60})
	if len(pay.in) > 60 || len(pay.in) < 50 || res.Planned <= 60 {
		t.Fatalf("recorded %d of %d planned payments, want 50–60", len(pay.in), res.Planned)
	}
	refs := map[string]bool{}
	for _, in := range pay.in {
		if in.Kind == model.KindPayment {
			refs[in.Provider+" "+in.PaymentRef] = true
		}
	}
	for _, in := range pay.in {
		if in.Kind == model.KindRefund && !refs[in.Provider+" "+in.RefundOf] {
			t.Errorf("refund %s recorded without its payment", in.TransactionID)
		}
	}
}

// Most pageviews report how far their page was scrolled, each report on a
// page its visitor viewed, and pages differ in how far they are read.
func TestScrollDepths(t *testing.T) {
	sink, _ := shared()
	type view struct {
		visitor uint64
		path    string
	}
	viewed, pageviews := map[view]bool{}, 0
	for _, e := range sink.events {
		if e.Name == model.PageviewName {
			viewed[view{e.VisitorID, e.Pathname}] = true
			pageviews++
		}
	}
	// 85 % of pageviews report: over ~100,000 of them, well within 80–90 %
	if n := len(sink.engagements); n < pageviews*80/100 || n > pageviews*90/100 {
		t.Errorf("%d scroll depths for %d pageviews, want about 85 %%", n, pageviews)
	}
	sum, count := map[string]float64{}, map[string]float64{}
	for _, g := range sink.engagements {
		if !viewed[view{g.VisitorID, g.Pathname}] || g.SiteID != site || g.EventID == "" {
			t.Fatalf("scroll depth %+v of no pageview of its visitor", g)
		}
		if g.ScrollDepth < 5 || g.ScrollDepth > 100 {
			t.Fatalf("scroll depth %d %%, want 5–100", g.ScrollDepth)
		}
		sum[g.Pathname] += float64(g.ScrollDepth)
		count[g.Pathname]++
	}
	low, high := 100.0, 0.0
	for p, n := range count {
		if n >= 100 {
			low, high = min(low, sum[p]/n), max(high, sum[p]/n)
		}
	}
	if high-low < 20 {
		t.Errorf("the pages' mean scroll depths span %.0f–%.0f %%: pages do not differ", low, high)
	}
}
