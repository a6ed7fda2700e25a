package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tally-analytics/tally/internal/chstore"
)

// targetViewsRatio: ingest with the rollups' views at least 0.9 × the rate
// without them.
const targetViewsRatio = 0.9

// viewsOrder is the noviews phase's runs, true with the views: with,
// without, without, with. Single runs on this kind of machine move by a
// tenth or more from one minute to the next; in this order a drift of the
// machine's speed over the phase weighs on both sides alike, and each side's
// mean is of two runs.
var viewsOrder = []bool{true, false, false, true}

// viewsRun is one run of the noviews phase.
type viewsRun struct {
	views  bool
	report *report
}

// viewsRounds runs o's ingest and batch phases once for each entry of
// viewsOrder, each on a server of its own over a fresh scratch database,
// migrated, and stripped of the rollups' materialised views for the runs
// without them. Set side by side they say what the views cost tally's
// ingest, the request path and the flusher included, where the raw phase
// measures ClickHouse alone. The scratch databases are dropped afterwards.
func viewsRounds(ctx context.Context, o options) ([]viewsRun, error) {
	if !o.phases["ingest"] && !o.phases["batch"] {
		return nil, errors.New("the noviews phase repeats the ingest and batch phases, and neither ran")
	}
	env, err := readEnvFile(o.envFile)
	if err != nil {
		return nil, err
	}
	if lookupEnv(env, "TALLY_CLICKHOUSE_CLUSTER") != "" {
		// DropRollupViews drops the views of the node it reaches only
		return nil, errors.New("the noviews phase runs on one ClickHouse node, not on a cluster")
	}
	base := lookupEnv(env, "TALLY_CLICKHOUSE_DATABASE")
	var runs []viewsRun
	var opts chstore.Options
	for i, views := range viewsOrder {
		nv := o
		nv.phases = map[string]bool{"ingest": o.phases["ingest"], "batch": o.phases["batch"]}
		nv.profile, nv.trace, nv.fresh, nv.dropViews = false, false, true, !views
		scratch, what := base+"_noviews", "without the rollups' views"
		if views {
			scratch, what = base+"_views", "with the rollups' views"
		}
		logf("noviews: run %d of %d, the ingest and batch phases on %s, %s", i+1, len(viewsOrder), scratch, what)
		b, err := measure(ctx, nv, map[string]string{"TALLY_CLICKHOUSE_DATABASE": scratch})
		if err != nil {
			return nil, err
		}
		opts = b.chOpts
		runs = append(runs, viewsRun{views: views, report: &b.report})
	}
	for _, name := range []string{base + "_views", base + "_noviews"} {
		opts.Database = name
		if err := chstore.DropDatabase(ctx, opts, name); err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// viewsMean is the mean of rate over the noviews phase's runs with the
// views (views true) or without them, and the runs' rates ("a, b"); 0 when
// a run lacks the phase.
func viewsMean(runs []viewsRun, views bool, rate func(*report) (float64, bool)) (float64, string) {
	var sum float64
	var parts []string
	for _, r := range runs {
		if r.views != views {
			continue
		}
		v, ok := rate(r.report)
		if !ok {
			return 0, ""
		}
		sum += v
		parts = append(parts, fmt.Sprintf("%.0f", v))
	}
	if len(parts) == 0 {
		return 0, ""
	}
	return sum / float64(len(parts)), strings.Join(parts, ", ")
}

// viewsRates are the two rates the views are held to: single-event ingest
// and the batch phase's sustained rate.
var viewsRates = []struct {
	name string
	rate func(*report) (float64, bool)
}{
	{"single-event ingest", func(r *report) (float64, bool) {
		if r.ingest == nil {
			return 0, false
		}
		return r.ingest.load.okRate(), true
	}},
	{"batch ingest, sustained,", func(r *report) (float64, bool) {
		if r.batch == nil {
			return 0, false
		}
		return r.batch.sustained(), true
	}},
}

// viewsTargets adds the Targets rows of the rollups' views: the mean rate
// of the noviews phase's runs with the views against the mean without them.
func (b *bench) viewsTargets(p func(format string, args ...any)) {
	runs := b.report.views
	for _, v := range viewsRates {
		with, withRuns := viewsMean(runs, true, v.rate)
		without, withoutRuns := viewsMean(runs, false, v.rate)
		if with == 0 || without == 0 {
			continue
		}
		p("| %s with the rollups' views ≥ %.2f × without them (noviews phase, means of two runs each) | %.2f (%.0f / %.0f events/s; runs %s / %s) | %s |",
			v.name, targetViewsRatio, with/without, with, without, withRuns, withoutRuns, check(with >= targetViewsRatio*without))
	}
}

// writeNoViews writes the noviews phase's runs.
func (b *bench) writeNoViews(p func(format string, args ...any)) {
	r := b.report
	writeFailure(p, "Ingest with and without the rollups' views", "noviews", r.viewsErr)
	if len(r.views) == 0 {
		return
	}
	p("## Ingest with and without the rollups' views")
	p("")
	p("The ingest and batch phases %d times more, in this order, each on a server of its own over a fresh scratch", len(r.views))
	p("database: migrated, and for the runs without the views stripped of every materialised view (the rollups', and")
	p("the funnels' `events_by_path`). The same tally, load and machine; the Targets table compares the means. With the")
	p("views, without, without, with: a drift of the machine's speed during the phase weighs on both sides alike.")
	p("")
	var rows []ingestRow
	var waits []string
	for i, run := range r.views {
		what := "without the views"
		if run.views {
			what = "with the views"
		}
		rows = append(rows,
			ingestRow{fmt.Sprintf("%d. single-event ingest, %s", i+1, what), b.o.conns, run.report.ingest, true},
			ingestRow{fmt.Sprintf("%d. batch ingest (%d events), %s", i+1, b.o.batchSize, what), b.o.batchConns, run.report.batch, true})
		if w := run.report.settledWaits(); w != "" {
			waits = append(waits, fmt.Sprintf("%d. %s", i+1, w))
		}
	}
	ingestTable(p, rows)
	p("")
	if len(waits) > 0 {
		p("Each load began once ClickHouse ran no merge and was idle, and the dirty pages were written (waited: %s).", strings.Join(waits, "; "))
		p("")
	}
}
