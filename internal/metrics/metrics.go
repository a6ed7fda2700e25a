// Package metrics holds tally's Prometheus collectors in one registry of its
// own (no package globals) and serves them in the text exposition format at
// GET /metrics: ingest outcomes, the write buffer (WAL size, flush lag),
// ClickHouse insert and query latencies, rate-limit rejections, lookups of
// sites that reached Postgres and HTTP request latencies, plus the Go
// runtime and process collectors.
//
// Every method is safe on a nil *Metrics, so a component built without
// metrics (a unit test, a CLI command) needs no stand-in.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Ingest outcomes, the values of tally_ingest_events_total's outcome label.
const (
	OutcomeAccepted    = "accepted"     // stored (or waiting in the WAL for ClickHouse)
	OutcomeBot         = "bot"          // recognised as a bot: counted, not stored
	OutcomeExcluded    = "excluded"     // matched the site's exclusions: answered as stored, counted, not stored
	OutcomeInvalid     = "invalid"      // refused with a 4xx
	OutcomeRateLimited = "rate_limited" // refused with 429
	OutcomeUnavailable = "unavailable"  // refused with a 5xx (WAL full, shutting down, ...)
)

// Metrics is the set of tally's collectors.
type Metrics struct {
	reg         *prometheus.Registry
	events      *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	limiterDown prometheus.Counter
	clickhouse  *prometheus.HistogramVec
	http        *prometheus.HistogramVec
	flush       *prometheus.HistogramVec
	siteLookups *prometheus.CounterVec
}

// New makes the collectors and registers them with the Go runtime and
// process collectors in a new registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tally_ingest_events_total",
			Help: "Events received by the ingest endpoints, by outcome (accepted, bot, excluded, invalid, rate_limited, unavailable).",
		}, []string{"outcome"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tally_rate_limit_rejections_total",
			Help: "Requests refused with 429, by limit (events, stats, tracker, login).",
		}, []string{"limit"}),
		limiterDown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tally_rate_limit_unavailable_total",
			Help: "Rate-limit checks Redis could not answer (the request was allowed).",
		}),
		clickhouse: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tally_clickhouse_duration_seconds",
			Help:    "ClickHouse call latency, by operation (insert_events, insert_sessions, ..., stats_query) and result (ok, error).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"op", "result"}),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tally_http_request_duration_seconds",
			Help:    "HTTP request latency, by route pattern, method and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method", "code"}),
		flush: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tally_flush_step_duration_seconds",
			Help: "Time the write buffer's flusher spends on each step of a batch (resolve: its sessions in Redis; build: its rows; " +
				"events, sessions, bot_events, engagements: the inserts, retries and lookups included; revenue; commit), by step.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"step"}),
		siteLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tally_site_lookups_total",
			Help: "Lookups of a site by id that reached Postgres (no cache of this instance answered them), by result (found, missing, error).",
		}, []string{"result"}),
	}
	m.reg.MustRegister(m.events, m.rateLimited, m.limiterDown, m.clickhouse, m.http, m.flush, m.siteLookups,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// CountEvents adds n events with the outcome.
func (m *Metrics) CountEvents(outcome string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.events.WithLabelValues(outcome).Add(float64(n))
}

// RateLimited counts a request refused by the named limit.
func (m *Metrics) RateLimited(limit string) {
	if m == nil {
		return
	}
	m.rateLimited.WithLabelValues(limit).Inc()
}

// LimiterUnavailable counts a rate-limit check Redis could not answer.
func (m *Metrics) LimiterUnavailable() {
	if m == nil {
		return
	}
	m.limiterDown.Inc()
}

// CountSiteLookup counts a lookup of a site by id that reached Postgres,
// by its result (found, missing, error).
func (m *Metrics) CountSiteLookup(result string) {
	if m == nil {
		return
	}
	m.siteLookups.WithLabelValues(result).Inc()
}

// ObserveClickHouse records the latency of a ClickHouse call.
func (m *Metrics) ObserveClickHouse(op string, d time.Duration, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.clickhouse.WithLabelValues(op, result).Observe(d.Seconds())
}

// ObserveFlush records the time the flusher spent on one step of a batch.
func (m *Metrics) ObserveFlush(step string, d time.Duration) {
	if m == nil {
		return
	}
	m.flush.WithLabelValues(step).Observe(d.Seconds())
}

// ObserveRequest records the latency of an HTTP request. route is the route
// pattern (never the raw path, whose values are unbounded).
func (m *Metrics) ObserveRequest(route, method string, code int, d time.Duration) {
	if m == nil {
		return
	}
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions:
	default:
		method = "other" // the method is the client's to choose: keep the label set bounded
	}
	m.http.WithLabelValues(route, method, strconv.Itoa(code)).Observe(d.Seconds())
}

// BufferStats is what the write buffer reports.
type BufferStats struct {
	// Written and Flushed count records appended to the WAL and inserted
	// into ClickHouse by this process; FlushFailures counts failed inserts.
	Written, Flushed, FlushFailures int64
	// WALBytes is the size of the write-ahead log on disk.
	WALBytes int64
	// Lag is the age of the oldest record read from the WAL and not yet in
	// ClickHouse (0 when all is flushed).
	Lag time.Duration
}

// WatchBuffer registers the write buffer's gauges and counters, read from
// stats at every scrape.
func (m *Metrics) WatchBuffer(stats func() BufferStats) {
	if m == nil {
		return
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tally_wal_bytes",
			Help: "Size of the write-ahead log of accepted events on disk."},
			func() float64 { return float64(stats().WALBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tally_buffer_flush_lag_seconds",
			Help: "Age of the oldest accepted record not yet inserted into ClickHouse (0 when none waits)."},
			func() float64 { return stats().Lag.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tally_buffer_written_records_total",
			Help: "Records appended to the write-ahead log (fsync'd) by this process."},
			func() float64 { return float64(stats().Written) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tally_buffer_flushed_records_total",
			Help: "Records inserted into ClickHouse by this process."},
			func() float64 { return float64(stats().Flushed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tally_buffer_flush_failures_total",
			Help: "ClickHouse inserts of the write buffer that failed (and were retried)."},
			func() float64 { return float64(stats().FlushFailures) }),
	)
}
