package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// load is one closed-loop load run: conns workers, each with its own
// keep-alive connection, sending requests back to back for a duration.
type load struct {
	method, url string
	header      http.Header
	bodies      [][]byte // request bodies, used round robin; nil for GET
	// once sends each body exactly once and stops (the duration still bounds it).
	once       bool
	conns      int
	duration   time.Duration
	wantStatus int
	// onBody, if set, is given each successful answer (to count per-event
	// results of batches).
	onBody func(body []byte)
}

// loadResult is what a load run measured.
type loadResult struct {
	Requests, OK, Errors int64
	Statuses             map[int]int64
	Latencies            []time.Duration // of every request, sorted
	Elapsed              time.Duration
}

func (r loadResult) rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r loadResult) okRate() float64 { return float64(r.OK) / r.Elapsed.Seconds() }

// percentile of the sorted latencies (0 < p ≤ 100).
func (r loadResult) percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.Latencies))*p/100+0.5) - 1
	return r.Latencies[min(max(i, 0), len(r.Latencies)-1)]
}

// newHTTPClient makes a client with exactly conns keep-alive connections.
func newHTTPClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
	}
}

// run sends requests until the duration is over and reports what happened.
func (l load) run(ctx context.Context) loadResult {
	client := newHTTPClient(l.conns)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, l.duration)
	defer cancel()
	var next atomic.Int64
	type workerResult struct {
		lat      []time.Duration
		ok, errs int64
		statuses map[int]int64
	}
	results := make([]workerResult, l.conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range l.conns {
		wg.Go(func() {
			res := workerResult{lat: make([]time.Duration, 0, 1<<16), statuses: map[int]int64{}}
			buf := make([]byte, 0, 64<<10)
			for ctx.Err() == nil {
				var body io.Reader
				if l.bodies != nil {
					i := int(next.Add(1) - 1)
					if l.once && i >= len(l.bodies) {
						break
					}
					body = bytes.NewReader(l.bodies[i%len(l.bodies)])
				}
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), l.method, l.url, body)
				for k, v := range l.header {
					req.Header[k] = v
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					res.errs++
					continue
				}
				buf, err = readAll(resp.Body, buf[:0])
				resp.Body.Close()
				res.lat = append(res.lat, time.Since(t0))
				res.statuses[resp.StatusCode]++
				if err != nil || resp.StatusCode != l.wantStatus {
					res.errs++
					continue
				}
				res.ok++
				if l.onBody != nil {
					l.onBody(buf)
				}
			}
			results[w] = res
		})
	}
	wg.Wait()
	out := loadResult{Elapsed: time.Since(start), Statuses: map[int]int64{}}
	for _, r := range results {
		out.OK += r.ok
		out.Errors += r.errs
		out.Latencies = append(out.Latencies, r.lat...)
		for s, n := range r.statuses {
			out.Statuses[s] += n
		}
	}
	out.Requests = out.OK + out.Errors
	slices.Sort(out.Latencies)
	return out
}

func readAll(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
