package main

import (
	"fmt"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/tally-analytics/tally/internal/soak"
)

// report is the Markdown the soak writes.
type report struct {
	opts              options
	started, finished time.Time
	results           []scenarioResult
}

func (r *report) ok() bool {
	for _, sr := range r.results {
		for _, rr := range sr.runs {
			if !rr.ok() {
				return false
			}
		}
	}
	return true
}

func (r *report) markdown() string {
	var b strings.Builder
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	fmt.Fprintf(&b, "# Fault soak, %s\n\n", r.started.Format("2006-01-02"))
	task, servers := "faults", "the local test stack (ClickHouse 18.16, PostgreSQL 15, Redis 7) on loopback, each reached through "+
		"a proxy that can take it away"
	if r.opts.cluster {
		task, servers = "faults:cluster", "the local ClickHouse cluster (2 shards × 2 replicas of ClickHouse 18.16 and ZooKeeper; "+
			"tally writes through Distributed tables with insert_distributed_sync and looks its batches up on every node), "+
			"PostgreSQL 15 and Redis 7 on loopback, each reached through a proxy that can take it away (a proxy for each "+
			"ClickHouse node, all four taken away together in the ClickHouse outages; the lookups reach the nodes at the "+
			"addresses of system.clusters, past the proxies)"
	}
	fmt.Fprintf(&b, "`go tool task %s` (cmd/faults: %d runs a scenario, %d of kill-at-flush, load phases of %v), tally %s, "+
		"%s/%s, %d CPUs; %s. Started %s, took %v.\n\n",
		task, r.opts.runs, r.opts.killRuns, r.opts.load, strings.TrimSpace(string(rev)), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(),
		servers, r.started.Format(time.RFC3339), r.finished.Sub(r.started).Round(time.Second))
	b.WriteString("Every run sends mixed traffic to one site of its own — pageviews and custom events through the Events API, " +
		"pageviews through the tracker's `/e`, and batches of 1,000 — each event with a path of its own, breaks tally as " +
		"the scenario says, mends it, stops tally with SIGTERM (exit status 0 expected), starts and stops it once more " +
		"(and again while a drain ends with records of the log unstored: the notes count those starts), " +
		"then looks for every event in ClickHouse. *Acknowledged* events were answered 201/202 or `success` in a batch " +
		"and must be stored exactly once; *refused* ones were answered 503 and must not be stored; *cut off* ones got " +
		"no answer (the server went away) and may be stored, once. A session is *corrupted* when its sum(sign) is " +
		"outside {0, 1}, when it is at 0 while events are stored under its id, or when it is live and its pageviews " +
		"or custom events differ from those stored under its id; an event stored without a session counts as a " +
		"corrupted session too. One single event in eight is a crawler's pageview " +
		"(accepted, then counted in `bot_events` by its id), one custom event in five carries 9.90 USD (the payments " +
		"ledger must hold one payment per accepted one, and none beyond those that might have been accepted), and " +
		"each tracker pageview accepted is followed by its page's scroll depth (a report of its own to `/e`, stored in " +
		"`engagements` under the page's path: exactly once when acknowledged, never when refused).\n\n")
	b.WriteString(r.summary())
	b.WriteString("\n## Scenarios\n\n")
	for _, sr := range r.results {
		fmt.Fprintf(&b, "- **%s**: %s.\n", sr.sc.name, sr.sc.what)
	}
	for _, sr := range r.results {
		if sr.sc.name != "kill-at-flush" {
			continue
		}
		where := map[string]int{}
		for _, rr := range sr.runs {
			where[rr.killedAt]++
		}
		keys := make([]string, 0, len(where))
		for k := range where {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("\nWhere the flusher stood at the kills (read from its checkpoint and plan right after each):\n\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "- %s: %d\n", k, where[k])
		}
	}
	b.WriteString("\n## Runs\n\n| scenario | run | took | acknowledged | refused | cut off (stored) | missing | duplicated | corrupted sessions | notes |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, sr := range r.results {
		for i, rr := range sr.runs {
			c := rr.counts
			notes := rr.killedAt
			if rr.drains > 0 {
				starts := "starts"
				if rr.drains == 1 {
					starts = "start"
				}
				notes = strings.TrimSpace(fmt.Sprintf("%s %d more %s to drain the log", notes, rr.drains, starts))
			}
			if rr.err != nil {
				notes = strings.TrimSpace(notes + " error: " + rr.err.Error())
			}
			if len(rr.exits) > 0 {
				notes = strings.TrimSpace(notes + " exits: " + strings.Join(rr.exits, "; "))
			}
			fmt.Fprintf(&b, "| %s | %d | %v | %d | %d | %d (%d) | %d | %d | %d | %s |\n", sr.sc.name, i+1, rr.took.Round(100*time.Millisecond),
				c.Acknowledged, c.Refused, c.CutOff, c.CutStored, c.Missing, c.Doubled, c.Corrupted(), notes)
		}
	}
	return b.String()
}

// summary is the table of scenarios, one line each.
func (r *report) summary() string {
	var b strings.Builder
	b.WriteString("| scenario | runs | acknowledged | refused | cut off (stored) | stored | missing | duplicated | refused but stored | sessions | corrupted sessions | bot events (missing, doubled) | revenue events (missing, doubled, extra) | scroll depths (missing, doubled, refused but stored) | unclean exits | result |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, sr := range r.results {
		var t runTotals
		for _, rr := range sr.runs {
			t.add(rr)
		}
		result := "held"
		if t.broken > 0 {
			result = fmt.Sprintf("**broken in %d runs**", t.broken)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d (%d) | %d | %d | %d | %d | %d | %d | %d (%d, %d) | %d (%d, %d, %d) | %d (%d, %d, %d) | %d | %s |\n",
			sr.sc.name, len(sr.runs), t.Acknowledged, t.Refused, t.CutOff, t.CutStored, t.Stored, t.Missing, t.Doubled,
			t.RefusedStored, t.Sessions, t.Corrupted(), t.Bots, t.BotsMissing, t.BotsDoubled, t.Revenue, t.RevenueMissing,
			t.RevenueDoubled, t.RevenueExtra, t.Scrolls, t.ScrollsMissing, t.ScrollsDoubled, t.ScrollsRefusedStored, t.exits, result)
	}
	return b.String()
}

// runTotals adds up the runs of a scenario.
type runTotals struct {
	soak.Counts
	exits, broken int
}

func (t *runTotals) add(rr runResult) {
	t.Counts.Add(rr.counts)
	t.exits += len(rr.exits)
	if !rr.ok() {
		t.broken++
	}
}
