package app_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/pkg/api"
)

// scrape reads /metrics with an optional bearer token.
func scrape(t *testing.T, h *harness, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metricValue finds one sample of the exposition text.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` ([0-9.e+-]+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Errorf("no sample %s", series)
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestMetrics(t *testing.T) {
	cfg := testenvConfigWith(t, func(c *configT) { c.ProEventsPerHour = 4 })
	h := newHarnessWith(t, cfg)
	ctx := context.Background()
	c := h.client(h.key)
	for _, ua := range []string{chromeUA, chromeUA, "Googlebot/2.1 (+http://www.google.com/bot.html)"} {
		pv := pageview(h, "https://example.com/")
		pv.UserAgent = ua
		if _, err := c.Pageview(ctx, pv); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: "nope"}); !isAPIError(err, 400, "invalid_request") {
		t.Fatalf("invalid event: %v, want 400", err)
	}
	if _, err := c.Pageview(ctx, pageview(h, "https://example.com/")); !isAPIError(err, 429, "rate_limit_exceeded") {
		t.Fatalf("5th event: %v, want 429", err)
	}
	h.waitCount(2, "SELECT count() FROM events")
	if _, err := c.Overview(ctx, statsParams(h)); err != nil {
		t.Fatal(err)
	}

	// the flusher counts a batch once all of its tables are written
	var status int
	var text string
	for deadline := time.Now().Add(10 * time.Second); ; {
		status, text = scrape(t, h, "") // the test client connects from loopback
		if status != 200 {
			t.Fatalf("GET /metrics: %d", status)
		}
		if strings.Contains(text, "\ntally_buffer_flushed_records_total 3\n") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for series, want := range map[string]float64{
		`tally_ingest_events_total{outcome="accepted"}`:                                                       2,
		`tally_ingest_events_total{outcome="bot"}`:                                                            1,
		`tally_ingest_events_total{outcome="rate_limited"}`:                                                   1,
		`tally_ingest_events_total{outcome="invalid"}`:                                                        1,
		`tally_rate_limit_rejections_total{limit="events"}`:                                                   1,
		`tally_buffer_written_records_total`:                                                                  3,
		`tally_buffer_flushed_records_total`:                                                                  3,
		`tally_buffer_flush_lag_seconds`:                                                                      0,
		`tally_http_request_duration_seconds_count{code="201",method="POST",route="/api/v1/events/pageview"}`: 3,
	} {
		if got := metricValue(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	series := []string{`tally_clickhouse_duration_seconds_count{op="insert_events",result="ok"}`,
		`tally_clickhouse_duration_seconds_count{op="stats_query",result="ok"}`}
	// every step of the flusher took the batches (no revenue among them)
	for _, step := range []string{"resolve", "build", "events", "sessions", "bot_events", "commit"} {
		series = append(series, `tally_flush_step_duration_seconds_count{step="`+step+`"}`)
	}
	for _, series := range series {
		if got := metricValue(t, text, series); got < 1 {
			t.Errorf("%s = %v, want at least 1", series, got)
		}
	}
	if metricValue(t, text, "tally_wal_bytes") <= 0 {
		t.Error("tally_wal_bytes is not positive")
	}

	// with a token configured, the token is required even from loopback
	tokCfg := testenvConfigWith(t, func(c *configT) { c.MetricsToken = "metrics-secret-token" })
	h2 := newHarnessWith(t, tokCfg)
	if status, _ := scrape(t, h2, ""); status != 401 {
		t.Errorf("without the token: %d, want 401", status)
	}
	if status, _ := scrape(t, h2, "wrong"); status != 401 {
		t.Errorf("with a wrong token: %d, want 401", status)
	}
	if status, text := scrape(t, h2, "metrics-secret-token"); status != 200 || metricValue(t, text, "tally_wal_bytes") < 0 {
		t.Errorf("with the token: %d", status)
	}
}
