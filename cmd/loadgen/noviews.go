package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/tally-analytics/tally/internal/chstore"
)

// targetViewsRatio: ingest with the rollups' views at least 0.9 × the rate
// without them.
const targetViewsRatio = 0.9

// noViewsRuns runs o's ingest and batch phases again on a server of its own
// whose ClickHouse database is a scratch one, migrated and then stripped of
// the rollups' materialised views, and drops that database afterwards. Its
// phases set beside the run's own say what the views cost tally's ingest,
// the request path and the flusher included, where the raw phase measures
// ClickHouse alone.
func noViewsRuns(ctx context.Context, o options) (*report, error) {
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
	nv := o
	nv.phases = map[string]bool{"ingest": o.phases["ingest"], "batch": o.phases["batch"]}
	nv.profile, nv.dropViews = false, true
	scratch := lookupEnv(env, "TALLY_CLICKHOUSE_DATABASE") + "_noviews"
	logf("noviews: the ingest and batch phases again, on %s without the rollups' views", scratch)
	b, err := measure(ctx, nv, map[string]string{"TALLY_CLICKHOUSE_DATABASE": scratch})
	if err != nil {
		return nil, err
	}
	return &b.report, chstore.DropDatabase(ctx, b.chOpts, scratch)
}

// viewsTargets adds the Targets rows of the rollups' views: tally's single
// and batch ingest with the views against the noviews phase's without them.
func (b *bench) viewsTargets(p func(format string, args ...any)) {
	r, nv := b.report, b.report.noViews
	if nv == nil {
		return
	}
	if r.ingest != nil && nv.ingest != nil {
		with, without := r.ingest.load.okRate(), nv.ingest.load.okRate()
		p("| single-event ingest with the rollups' views ≥ %.2f × without them | %.2f (%.0f / %.0f events/s) | %s |",
			targetViewsRatio, with/without, with, without, check(with >= targetViewsRatio*without))
	}
	if r.batch != nil && nv.batch != nil {
		with, without := r.batch.sustained(), nv.batch.sustained()
		p("| batch ingest, sustained, with the rollups' views ≥ %.2f × without them | %.2f (%.0f / %.0f events/s) | %s |",
			targetViewsRatio, with/without, with, without, check(with >= targetViewsRatio*without))
	}
}

// writeNoViews sets the noviews phase's rows beside the run's own.
func (b *bench) writeNoViews(p func(format string, args ...any)) {
	r, nv := b.report, b.report.noViews
	writeFailure(p, "Ingest without the rollups' views", "noviews", r.noViewsErr)
	if nv == nil {
		return
	}
	p("## Ingest without the rollups' views")
	p("")
	p("The ingest and batch phases again, on a server of their own over a scratch database that was migrated and then")
	p("stripped of every materialised view (the rollups', and the funnels' `events_by_path`): the same tally, load and")
	p("machine, with nothing kept but the raw tables. The Targets table gives the ratios; the rows side by side.")
	if waits := nv.settledWaits(); waits != "" {
		p("Its phases too began once ClickHouse ran no merge (waited: %s).", waits)
	}
	p("")
	ingestTable(p, []ingestRow{
		{"single-event ingest, with the views", b.o.conns, r.ingest, true},
		{"single-event ingest, without them", b.o.conns, nv.ingest, true},
		{fmt.Sprintf("batch ingest (%d events), with the views", b.o.batchSize), b.o.batchConns, r.batch, true},
		{fmt.Sprintf("batch ingest (%d events), without them", b.o.batchSize), b.o.batchConns, nv.batch, true},
	})
	p("")
}
