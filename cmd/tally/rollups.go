package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
)

func newRollupsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "rollups", Short: "Look after the rollups the reports read"}
	cmd.AddCommand(newRollupsRebuildCmd())
	return cmd
}

type rollupsRebuildRun struct {
	site, from string
}

func newRollupsRebuildCmd() *cobra.Command {
	var run rollupsRebuildRun
	cmd := &cobra.Command{
		Use:   "rebuild [--site SITE_ID] [--from YYYY-MM-DD]",
		Short: "Rebuild the rollups of the reports from the raw events and sessions",
		Long: `rebuild rewrites the rollups the reports read (clickhouse/0005_page_rollups.sql
and 0008_rollups.sql to 0018, as those leave them: the pages, the overview,
sources, campaigns, devices, locations and their visitor blocks, entry and
exit pages, custom events, bots; and the funnels' copy of the events,
0014_events_by_path.sql) from the raw rows, for one site (--site) or every
site, from --from (a UTC day; default: the day of the earliest stored row) up
to the start of yesterday, UTC.

Materialised views keep the rollups in step with every insert; an insert
whose views failed halfway leaves them short, and this mends them. Each
table in turn: its rows of the range are deleted (a ClickHouse mutation,
waited for), then built again from the raw rows a day at a time. While a
table is rebuilt its reports of those days read low.

Yesterday and today are left alone: their rows are still being written (a
session's rows carry the time it started, up to a day back), and rows the
views add while the rebuild reads the same days would count twice. So a
rebuild is safe while tally servers run, unless their write-ahead logs hold
a backlog older than yesterday (after an outage of ClickHouse): let it drain
first.

Progress goes to stderr: a line per table, and one every 10 s on long runs.`,
		Example: `  tally rollups rebuild
  tally rollups rebuild --site k3v9x0q2m1ab
  tally rollups rebuild --site k3v9x0q2m1ab --from 2026-05-01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&run.site, "site", "", "site id (default: every site)")
	f.StringVar(&run.from, "from", "", "first UTC day to rebuild, YYYY-MM-DD (default: the earliest stored)")
	return cmd
}

func (run rollupsRebuildRun) run(cmd *cobra.Command) error {
	var from time.Time
	if run.from != "" {
		d, err := time.Parse(time.DateOnly, run.from)
		if err != nil {
			return errs.InvalidField("from", "must be a date, YYYY-MM-DD")
		}
		from = d
	}
	e, err := loadEnv(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	site := model.SiteID(run.site)
	if site != "" {
		pg, err := e.postgres(ctx)
		if err != nil {
			return err
		}
		_, err = siteNamed(ctx, pg, site, "site")
		pg.Close()
		if err != nil {
			return err
		}
	}
	ch, err := e.clickhouse(ctx)
	if err != nil {
		return err
	}
	defer ch.Close()
	if from.IsZero() {
		if from, err = ch.EarliestRaw(ctx, site); err != nil {
			return err
		}
	}
	w := cmd.ErrOrStderr()
	to := stats.RebuildBefore(time.Now())
	from = from.UTC().Truncate(24 * time.Hour)
	if from.IsZero() || !from.Before(to) {
		fmt.Fprintf(w, "nothing to rebuild: no stored rows before %s (yesterday and today are still being written)\n",
			to.Format(time.DateOnly))
		return nil
	}
	who := "every site"
	if site != "" {
		who = "site " + string(site)
	}
	fmt.Fprintf(w, "rebuilding the rollups of %s from %s to %s (UTC days, the last excluded)\n", who,
		from.Format(time.DateOnly), to.Format(time.DateOnly))
	p := &rebuildProgress{w: w, start: time.Now()}
	if err := ch.RebuildRollups(ctx, site, from, to, p.update); err != nil {
		fmt.Fprintf(w, "rebuild stopped after %s: %v\n", time.Since(p.start).Round(time.Millisecond), err)
		return err
	}
	fmt.Fprintf(w, "rebuilt %d tables in %s\n", len(stats.RollupTables()), time.Since(p.start).Round(time.Millisecond))
	return nil
}

// rebuildProgress writes a line per table rebuilt, and one every 10 s.
type rebuildProgress struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

func (p *rebuildProgress) update(st chstore.RebuildStep) {
	now := time.Now()
	switch {
	case st.Done == st.Days:
		fmt.Fprintf(p.w, "%s: %d days in %s\n", st.Table, st.Days, st.Took.Round(time.Millisecond))
	case now.Sub(p.last) >= 10*time.Second:
		fmt.Fprintf(p.w, "%s: %d of %d days\n", st.Table, st.Done, st.Days)
	default:
		return
	}
	p.last = now
}
