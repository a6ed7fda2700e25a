package ingest

import (
	"context"
	"net/netip"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/ingest/geo"
	"github.com/tally-analytics/tally/internal/ingest/geo/geotest"
	"github.com/tally-analytics/tally/internal/ingest/referrer"
	"github.com/tally-analytics/tally/internal/ingest/useragent"
	"github.com/tally-analytics/tally/internal/model"
)

// memSalts is an honest in-memory SaltStore.
type memSalts struct {
	mu    sync.Mutex
	salts map[string][]byte
}

func (m *memSalts) Salt(_ context.Context, day time.Time, candidate []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.salts == nil {
		m.salts = map[string][]byte{}
	}
	k := day.Format(time.DateOnly)
	if s, ok := m.salts[k]; ok {
		return s, nil
	}
	m.salts[k] = candidate
	return candidate, nil
}

func (m *memSalts) DeleteSaltsBefore(context.Context, time.Time) error { return nil }

const chromeMac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"

func newTestEnricher(t *testing.T) *Enricher {
	t.Helper()
	ua, err := useragent.New(100)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := referrer.New()
	if err != nil {
		t.Fatal(err)
	}
	db := geotest.OpenCityDB(t, map[string]geo.Location{
		"81.2.69.0/24": {CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
	})
	return &Enricher{UA: ua, Geo: db, Referrers: refs, Visitors: NewVisitors(&memSalts{})}
}

func TestEnrich(t *testing.T) {
	e := newTestEnricher(t)
	site := model.Site{ID: "s1", Domain: "example.com"}
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tests := []struct {
		name     string
		ev       event
		wantPath string
		want     model.Attribution
		wantBot  bool
	}{
		{
			name: "search referrer, desktop, geo",
			ev: event{url: mustURL("https://www.example.com/pricing?x=1#top"), referrer: mustURL("https://www.google.com/search?q=secret"),
				userAgent: chromeMac, ip: netip.MustParseAddr("81.2.69.142")},
			wantPath: "/pricing",
			want: model.Attribution{Hostname: "example.com", Referrer: "google.com/search", ReferrerSource: "Google",
				SourceType: "search", Device: "Desktop", Browser: "Chrome", BrowserVersion: "120.0", OS: "macOS",
				OSVersion: "10.15", CountryCode: "GB", RegionCode: "GB-ENG", RegionName: "England", City: "London"},
		},
		{
			name:     "utm source overrides the referrer",
			ev:       event{url: mustURL("https://example.com/?utm_source=Newsletter&utm_medium=email&utm_campaign=spring&utm_content=a&utm_term=b"), referrer: mustURL("https://news.ycombinator.com/")},
			wantPath: "/",
			want: model.Attribution{Hostname: "example.com", Referrer: "news.ycombinator.com/", ReferrerSource: "Newsletter",
				SourceType: "referral", UTMSource: "Newsletter", UTMMedium: "email", UTMCampaign: "spring", UTMContent: "a", UTMTerm: "b"},
		},
		{
			name:     "referrer from the site itself is not a source",
			ev:       event{url: mustURL("https://example.com/b"), referrer: mustURL("https://blog.example.com/a")},
			wantPath: "/b",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "unknown referrer",
			ev:       event{url: mustURL("https://example.com"), referrer: mustURL("https://www.some-blog.dev/post/1?id=2")},
			wantPath: "/",
			want:     model.Attribution{Hostname: "example.com", Referrer: "some-blog.dev/post/1", ReferrerSource: "some-blog.dev", SourceType: "referral"},
		},
		{
			name:     "percent-encoded bytes that are no UTF-8 stay encoded",
			ev:       event{url: mustURL("https://example.com/caf%E9/men%C3%BC?utm_source=caf%E9&utm_campaign=men%C3%BC")},
			wantPath: "/caf%E9/men%C3%BC",
			want: model.Attribution{Hostname: "example.com", ReferrerSource: "caf%E9", SourceType: "referral",
				UTMSource: "caf%E9", UTMCampaign: "menü"},
		},
		{
			name:     "percent-encoded UTF-8 is decoded",
			ev:       event{url: mustURL("https://example.com/men%C3%BC")},
			wantPath: "/menü",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash-routed page: the fragment up to its query string",
			ev:       event{url: mustURL("https://example.com/app/#/pricing?plan=pro"), hashRoutes: true},
			wantPath: "/app/#/pricing",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a sign-in's token in the fragment is no route",
			ev:       event{url: mustURL("https://example.com/callback#access_token=abc&token_type=bearer"), hashRoutes: true},
			wantPath: "/callback",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash route ends before its parameters",
			ev:       event{url: mustURL("https://example.com/#/login/token=abc"), hashRoutes: true},
			wantPath: "/#/login",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash router's root is the page's path",
			ev:       event{url: mustURL("https://example.com/app/#/"), hashRoutes: true},
			wantPath: "/app/",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hashbang route",
			ev:       event{url: mustURL("https://example.com/#!/pricing"), hashRoutes: true},
			wantPath: "/#!/pricing",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash-routed page without a fragment",
			ev:       event{url: mustURL("https://example.com/app"), hashRoutes: true},
			wantPath: "/app",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash route with bytes that are no UTF-8 stays encoded",
			ev:       event{url: mustURL("https://example.com/caf%E9#/men%C3%BC"), hashRoutes: true},
			wantPath: "/caf%E9#/men%C3%BC",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a percent-encoded token in the fragment is no route either, beside bytes that are no UTF-8",
			ev:       event{url: mustURL("https://example.com/caf%E9#access_token%3DSECRET&token_type%3Dbearer"), hashRoutes: true},
			wantPath: "/caf%E9",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash route with bytes that are no UTF-8 ends before its percent-encoded parameters",
			ev:       event{url: mustURL("https://example.com/cb#/x%E9/login/token%3DSECRET"), hashRoutes: true},
			wantPath: "/cb#/x%E9/login",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a hash route with bytes that are no UTF-8 ends before its percent-encoded query string",
			ev:       event{url: mustURL("https://example.com/caf%E9#/pricing%3Fplan"), hashRoutes: true},
			wantPath: "/caf%E9#/pricing",
			want:     model.Attribution{Hostname: "example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "a fully qualified host, in upper case, is stored as the site's domain names it",
			ev:       event{url: mustURL("https://WWW.Blog.Example.com./a")},
			wantPath: "/a",
			want:     model.Attribution{Hostname: "blog.example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:     "an internationalised host is stored in punycode, as browsers send it",
			ev:       event{url: mustURL("https://Bücher.example.com/a")},
			wantPath: "/a",
			want:     model.Attribution{Hostname: "xn--bcher-kva.example.com", ReferrerSource: "Direct / None", SourceType: "direct"},
		},
		{
			name:    "bot",
			ev:      event{url: mustURL("https://example.com/"), userAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
			wantBot: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ev.site = site.ID
			readParams(tt.ev.url.RawQuery, &tt.ev.params) // as validate does
			d := &draft{ev: &tt.ev, at: at, site: &site}
			if err := e.enrich(context.Background(), d); err != nil {
				t.Fatal(err)
			}
			if tt.wantBot {
				if d.botReason == "" {
					t.Fatal("bot not recognised")
				}
				return
			}
			if d.botReason != "" {
				t.Fatalf("recognised as bot: %s", d.botReason)
			}
			if d.pathname != tt.wantPath {
				t.Errorf("path = %q, want %q", d.pathname, tt.wantPath)
			}
			if diff := cmp.Diff(tt.want, d.attr); diff != "" {
				t.Errorf("attribution (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVisitorIDs(t *testing.T) {
	e := newTestEnricher(t)
	ctx := context.Background()
	day1 := time.Date(2026, 5, 4, 23, 59, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Minute)
	a1, _ := e.Visitors.Anonymous(ctx, "s1", "81.2.69.142", chromeMac, day1)
	a1again, _ := e.Visitors.Anonymous(ctx, "s1", "81.2.69.142", chromeMac, day1.Add(-time.Hour))
	a2, _ := e.Visitors.Anonymous(ctx, "s1", "81.2.69.142", chromeMac, day2)
	otherSite, _ := e.Visitors.Anonymous(ctx, "s2", "81.2.69.142", chromeMac, day1)
	otherIP, _ := e.Visitors.Anonymous(ctx, "s1", "81.2.69.143", chromeMac, day1)
	if a1 != a1again {
		t.Error("same visitor, same day: ids differ")
	}
	if a1 == a2 {
		t.Error("the id did not change with the day's salt")
	}
	if a1 == otherSite || a1 == otherIP {
		t.Error("different site or IP gave the same id")
	}
	if FromClientID("s1", "abc") != FromClientID("s1", "abc") || FromClientID("s1", "abc") == FromClientID("s2", "abc") {
		t.Error("client ids must map stably and per site")
	}
}
