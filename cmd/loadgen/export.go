package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// exportResult is one raw export of the export phase's site, through the
// HTTP API, with the server's memory while it ran.
type exportResult struct {
	Format, Encoding string
	Records          int64 // records read from the answer
	Trailer          string
	Stored, InRange  int64 // SELECT count() of the site's events, all and in the range
	Bytes            int64 // the answer's bytes on the wire
	Took             time.Duration
	// PeakRSS is the highest VmRSS sampled every 20 ms; HWM is the kernel's
	// peak (VmHWM, reset before the export), when it could be reset.
	PeakRSS, HWM, RSSBefore int64
	CPU                     float64 // tally's CPU, share of one core
	Problems                []string
}

// exportSite is the site holding --export-events demo events: the one of
// an earlier run when it holds as many, else a new one loaded with "tally
// demo" (30 days, no payments).
func (b *bench) exportSite(ctx context.Context) (string, error) {
	stateFile := filepath.Join(b.o.workDir, fmt.Sprintf("export-site-%d.json", b.o.exportEvents))
	var st struct {
		SiteID string `json:"site_id"`
	}
	if data, err := os.ReadFile(stateFile); err == nil && json.Unmarshal(data, &st) == nil && st.SiteID != "" {
		var n uint64
		if err := b.ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_id = ?", st.SiteID).Scan(&n); err == nil &&
			int(n) >= b.o.exportEvents {
			logf("export: reusing site %s with %d events", st.SiteID, n)
			return st.SiteID, nil
		}
	}
	site, err := b.newSite(ctx, "export.bench.example.com")
	if err != nil {
		return "", err
	}
	logf("export: loading %d demo events over 30 days into site %s", b.o.exportEvents, site)
	cmd := exec.CommandContext(ctx, b.srv.Bin, "demo", "--events", strconv.Itoa(b.o.exportEvents), "--site", site,
		"--days", "30", "--payments", "0")
	cmd.Env, cmd.Stdout, cmd.Stderr = b.srv.Env, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tally demo: %w", err)
	}
	data, _ := json.Marshal(map[string]string{"site_id": site})
	return site, os.WriteFile(stateFile, data, 0o644)
}

// exports exports the site's last 40 days (UTC, all its events) as NDJSON,
// as gzip-compressed NDJSON and as gzip-compressed CSV, one at a time, each
// read to its end and checked record by record.
func (b *bench) exports(ctx context.Context, site string) error {
	today := time.Now().UTC()
	from := today.AddDate(0, 0, -40).Format(time.DateOnly)
	to := today.Format(time.DateOnly)
	var stored, inRange uint64
	if err := b.ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_id = ?", site).Scan(&stored); err != nil {
		return err
	}
	if err := b.ch.QueryRow(ctx, "SELECT count() FROM events WHERE site_id = ? AND ts >= toDateTime(?) AND ts < toDateTime(?)",
		site, from+" 00:00:00", today.AddDate(0, 0, 1).Format(time.DateOnly)+" 00:00:00").Scan(&inRange); err != nil {
		return err
	}
	q := url.Values{"site_id": {site}, "date_from": {from}, "date_to": {to}, "timezone": {"UTC"}}
	for _, v := range []struct{ format, encoding string }{{"ndjson", "identity"}, {"ndjson", "gzip"}, {"csv", "gzip"}} {
		logf("export: %d events as %s (%s)", inRange, v.format, v.encoding)
		q.Set("format", v.format)
		res, err := b.export(ctx, q, v.encoding)
		if err != nil {
			return err
		}
		res.Format, res.Encoding, res.Stored, res.InRange = v.format, v.encoding, int64(stored), int64(inRange)
		logf("export: %d records (%d stored), %.1f MB in %s, tally peak RSS %.0f MB (VmHWM %.0f MB)", res.Records, stored,
			float64(res.Bytes)/1e6, res.Took.Round(time.Millisecond), mb(res.PeakRSS), mb(res.HWM))
		for _, p := range res.Problems {
			logf("export: PROBLEM: %s", p)
		}
		b.report.exports = append(b.report.exports, res)
	}
	return nil
}

func (b *bench) export(ctx context.Context, q url.Values, encoding string) (exportResult, error) {
	var res exportResult
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/api/v1/export/events?"+q.Encode(), nil)
	if err != nil {
		return res, err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Accept-Encoding", encoding) // set by hand: the transport leaves the body as it came
	pid := b.srv.PID()
	res.RSSBefore = procStatus(pid, "VmRSS")
	resetHWM := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	sampler := sampleRSS(pid, 20*time.Millisecond)
	cpu0, _ := readProc(pid)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		sampler.stop()
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		sampler.stop()
		body, _ := io.ReadAll(resp.Body)
		return res, fmt.Errorf("export: %d %s", resp.StatusCode, body)
	}
	wire := &countingReader{r: resp.Body}
	var body io.Reader = wire
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(wire)
		if err != nil {
			sampler.stop()
			return res, err
		}
		body = zr
	}
	if q.Get("format") == "csv" {
		res.Records, res.Problems = checkCSV(body)
	} else {
		res.Records, res.Problems = checkNDJSON(body)
	}
	res.Took = time.Since(start)
	cpu1, _ := readProc(pid)
	res.PeakRSS = sampler.stop()
	if resetHWM {
		res.HWM = procStatus(pid, "VmHWM")
	}
	res.CPU = 100 * float64(cpu1.cpu-cpu0.cpu) / float64(res.Took)
	res.Bytes, res.Trailer = wire.n, resp.Trailer.Get("X-Export-Records")
	if res.Trailer != strconv.FormatInt(res.Records, 10) {
		res.Problems = append(res.Problems, fmt.Sprintf("trailer X-Export-Records %q, %d records read", res.Trailer, res.Records))
	}
	return res, nil
}

// checkNDJSON counts the records of an NDJSON export and checks that each
// is one object, with an event id seen once, in the order of time.
func checkNDJSON(r io.Reader) (int64, []string) {
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	seen := make(map[string]struct{}, 1<<20)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var n int64
	last := ""
	for sc.Scan() {
		n++
		line := sc.Bytes()
		id, ok1 := field(line, `{"event_id":"`)
		ts, ok2 := field(line, `,"timestamp":"`)
		if !ok1 || !ok2 || line[len(line)-1] != '}' {
			problem("record %d is not an event: %.200s", n, line)
			continue
		}
		if _, dup := seen[string(id)]; dup {
			problem("record %d repeats event %s", n, id)
		}
		seen[string(id)] = struct{}{}
		if string(ts) < last {
			problem("record %d (%s) comes after %s", n, ts, last)
		}
		last = string(ts)
	}
	if err := sc.Err(); err != nil {
		problem("reading the answer: %v", err)
	}
	return n, problems
}

// checkCSV counts the rows of a CSV export after its header.
func checkCSV(r io.Reader) (int64, []string) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return 0, []string{"no header: " + err.Error()}
	}
	var n int64
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, []string{fmt.Sprintf("row %d: %v", n+1, err)}
		}
		if len(rec) != len(header) {
			return n, []string{fmt.Sprintf("row %d has %d cells, the header %d", n+1, len(rec), len(header))}
		}
		n++
	}
}

// field is the JSON string value after prefix in line (prefix included
// where it must start the line: {"event_id").
func field(line []byte, prefix string) ([]byte, bool) {
	i := bytes.Index(line, []byte(prefix))
	if i < 0 || (prefix[0] == '{' && i != 0) {
		return nil, false
	}
	rest := line[i+len(prefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil, false
	}
	return rest[:j], true
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// rssSampler reads a process's VmRSS until stopped and keeps the highest.
type rssSampler struct {
	stopCh chan struct{}
	done   sync.WaitGroup
	peak   int64
}

func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{stopCh: make(chan struct{})}
	s.done.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.peak = max(s.peak, procStatus(pid, "VmRSS"))
			select {
			case <-s.stopCh:
				return
			case <-t.C:
			}
		}
	})
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.stopCh)
	s.done.Wait()
	return s.peak
}

// procStatus reads a "kB" line of /proc/<pid>/status, in bytes (0 when it
// cannot).
func procStatus(pid int, name string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// writeExports writes the export phase's section of the report.
func (b *bench) writeExports(p func(format string, args ...any)) {
	r := b.report
	if len(r.exports) == 0 {
		return
	}
	p("## Raw event export (%d demo events over 30 days, one export at a time)", b.o.exportEvents)
	p("")
	p("`GET /api/v1/export/events` of the site's last 40 days (UTC), read to its end by the load generator over")
	p("loopback, which checks every record (one object per line, each event id once, in the order of time; CSV: a")
	p("row of as many cells as the header per event). tally's memory is its VmRSS sampled every 20 ms and the")
	p("kernel's peak (VmHWM, reset before each export); \"stored\" is `SELECT count() FROM events WHERE site_id = …`.")
	p("")
	p("| format | encoding | records | stored events | trailer | bytes on the wire | took | records/s | tally CPU | tally RSS before | tally peak RSS (sampled) | tally VmHWM |")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, e := range r.exports {
		hwm := "–"
		if e.HWM > 0 {
			hwm = fmt.Sprintf("%.0f MB", mb(e.HWM))
		}
		p("| %s | %s | %d | %d | %s | %.1f MB | %s | %.0f | %.0f%% | %.0f MB | %.0f MB | %s |", e.Format, e.Encoding,
			e.Records, e.Stored, e.Trailer, float64(e.Bytes)/1e6, e.Took.Round(time.Millisecond),
			float64(e.Records)/e.Took.Seconds(), e.CPU, mb(e.RSSBefore), mb(e.PeakRSS), hwm)
	}
	p("")
	for _, e := range r.exports {
		for _, problem := range e.Problems {
			p("- %s (%s): %s", e.Format, e.Encoding, problem)
		}
	}
}

// exportPeak is the highest memory any export of the phase saw.
func exportPeak(r report) int64 {
	var peak int64
	for _, e := range r.exports {
		peak = max(peak, e.PeakRSS, e.HWM)
	}
	return peak
}

// exportsExact reports whether every export held every stored event, and
// nothing wrong.
func exportsExact(r report) bool {
	for _, e := range r.exports {
		if e.Records != e.Stored || e.Records != e.InRange || len(e.Problems) > 0 {
			return false
		}
	}
	return len(r.exports) > 0
}
