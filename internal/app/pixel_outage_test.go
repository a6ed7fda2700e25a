package app_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// Three visitors, told apart only by their addresses and user agents as a
// pixel's are, load a page's image every 20 s: 2 rounds with every store
// up, 2 with ClickHouse away, 1 with Postgres away, 2 with Redis away, 2
// with every store back. Each load is answered the image: an outage of
// ClickHouse or Redis holds the events in the write-ahead log, one of
// Postgres is met with the site as cached. An image for a site no server
// has seen, while Postgres is away, is the one refusal: 503 with
// Retry-After. (Postgres goes before Redis: a server forgets the sites it
// cached when Redis comes back, and would then ask Postgres.)
//
// So, once the stores are back: 9 rounds × 3 visitors = 27 pageviews, each
// stored once and in a session; 3 sessions, one per visitor, of 9
// pageviews over 160 s; tracking health 27 accepted, nothing refused (the
// unknown site counts for no site).
func TestPixelThroughStoreOutages(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.TrustedProxies = []string{"127.0.0.1/32"}
	stores := proxyStores(t, cfg)
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	site := string(h.siteID)
	const step = 20 * time.Second
	t0 := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	visitors := []struct {
		name   string
		header []string
	}{
		{"alice", []string{"X-Forwarded-For", "81.2.69.10"}},
		{"bob", []string{"X-Forwarded-For", "216.160.83.20", "User-Agent", firefoxUA}},
		{"carol", []string{"X-Forwarded-For", "203.0.113.7"}},
	}

	rounds := 0
	sent := map[string][]string{} // each visitor's pages, in order
	send := func(phase string, n int) {
		t.Helper()
		for range n {
			h.clock.Set(t0.Add(time.Duration(rounds) * step))
			for _, v := range visitors {
				path := fmt.Sprintf("/%s/%s/%d", v.name, phase, rounds)
				a := loadPixel(t, h, http.MethodGet, pixelQuery("site_id", site, "url", "https://example.com"+path), v.header...)
				a.wantImage(t, phase+": "+path)
				sent[v.name] = append(sent[v.name], path)
			}
			rounds++
		}
	}
	perRound := int64(len(visitors))
	// waiting checks that the flusher met the outage and holds the events
	// sent since it began in the write-ahead log.
	waiting := func(store string, failures, n int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); h.app.Buffer.Stats().FlushFailures == failures; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s down: the flusher never met the outage: %+v", store, h.app.Buffer.Stats())
			}
		}
		if st := h.app.Buffer.Stats(); st.Written-st.Flushed != n {
			t.Errorf("%s down: %+v; want the %d events of the outage waiting", store, st, n)
		}
	}

	send("before", 2)
	waitFlushed(t, h)
	stored := 2 * perRound

	stores.ch.Down()
	failures := h.app.Buffer.Stats().FlushFailures
	send("clickhouse", 2)
	waiting("ClickHouse", failures, 2*perRound) // and the reads of this test go through the same proxy
	stores.ch.Up()
	waitFlushed(t, h)

	stores.pg.Down()
	send("postgres", 1)
	unknown := loadPixel(t, h, http.MethodGet, pixelQuery("site_id", "nosuchsite01", "url", "https://example.com/"), visitors[0].header...)
	unknown.wantError(t, "a site never seen, with Postgres down", http.StatusServiceUnavailable, "service_unavailable", "")
	if ra := unknown.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("a site never seen, with Postgres down: Retry-After %q, want a wait", ra)
	}
	stores.pg.Up()
	waitFlushed(t, h)
	stored += 3 * perRound

	stores.redis.Down()
	failures = h.app.Buffer.Stats().FlushFailures
	send("redis", 2)
	waiting("Redis", failures, 2*perRound)
	if n := h.count("SELECT count() FROM events WHERE site_id = ?", site); n != stored {
		t.Errorf("%d events stored with Redis down, want the %d from before", n, stored)
	}
	stores.redis.Up()
	send("after", 2)
	waitFlushed(t, h)

	checkPixelVisits(t, h, sent, rounds, t0, step)
	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	health, err := h.client(h.key).Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-11-09", DateTo: "2026-11-10", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.IngestionCounts{Accepted: 27}); health.Data.Totals != want {
		t.Errorf("tracking health: %+v, want %+v", health.Data.Totals, want)
	}
}

// checkPixelVisits checks the stored pageviews of the pixel's visitors:
// each page sent stored once and in a session, one visitor id and one
// session per visitor (a page's path begins with its visitor's name), each
// one unbroken visit of a page every step from t0.
func checkPixelVisits(t *testing.T, h *harness, sent map[string][]string, rounds int, t0 time.Time, step time.Duration) {
	t.Helper()
	events := storedEvents(t, h)
	if want := rounds * len(sent); len(events) != want {
		t.Errorf("%d events stored, want %d", len(events), want)
	}
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND session_id = 0", string(h.siteID)); n != 0 {
		t.Errorf("%d events stored without a session", n)
	}
	idOf := map[string]uint64{}
	byVisitor := map[uint64][]model.EventRow{}
	for _, e := range events {
		name, _, _ := strings.Cut(strings.TrimPrefix(e.Pathname, "/"), "/")
		if id, ok := idOf[name]; ok && id != e.VisitorID {
			t.Errorf("%s: pageviews of two visitor ids, %d and %d", name, id, e.VisitorID)
		}
		if e.Name != model.PageviewName || e.StableVisitor {
			t.Errorf("%s: %s by a stable visitor %v, want a pageview of the day's visitor", e.Pathname, e.Name, e.StableVisitor)
		}
		idOf[name] = e.VisitorID
		byVisitor[e.VisitorID] = append(byVisitor[e.VisitorID], e)
	}
	if len(byVisitor) != len(sent) {
		t.Errorf("%d visitor ids, want %d", len(byVisitor), len(sent))
	}
	live := liveSessions(t, h)
	if len(live) != len(sent) {
		t.Errorf("%d live sessions, want %d (one per visitor)", len(live), len(sent))
	}
	for _, name := range slices.Sorted(maps.Keys(sent)) {
		checkOutageVisitor(t, name, idOf[name], byVisitor, live, sent[name], t0, step)
	}
}
