package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tally-analytics/tally/internal/export"
	"github.com/tally-analytics/tally/internal/stats"
)

func newExportCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Export a site's raw data"}
	cmd.AddCommand(newExportEventsCmd())
	return cmd
}

type exportEventsRun struct {
	site, from, to, format, timezone string
}

func newExportEventsCmd() *cobra.Command {
	var run exportEventsRun
	cmd := &cobra.Command{
		Use:   "events --site SITE_ID --from YYYY-MM-DD --to YYYY-MM-DD [--format ndjson|csv] [--timezone TZ]",
		Short: "Write a site's raw events to stdout, one record per stored event",
		Long: `events writes every stored event (pageviews and custom events; bots are not
events) of a site from --from to --to, both days included, to stdout in the
order of time: the records of GET /api/v1/export/events, read straight from
the stores with the server's configuration (TALLY_* variables), for
operators. No account is needed and no limit applies.

The days are days of --timezone, else of the site's time zone, as in the
statistics; --to may equal --from (one day). Records hold the event id, its
UTC timestamp, name, pathname, hostname, referrer, source and source type,
the UTM fields, device, browser and OS with their versions, country,
region (code and name) and city, props,
revenue (amount in minor units and currency) and opaque session and
visitor ids; never an IP address or a user agent, which tally does not
store.

  ndjson  one JSON object per line (the default)
  csv     a header row and a row per event (RFC 4180, CRLF); props is one
          column holding a JSON object; text a spreadsheet would run as a
          formula (=, +, -, @, a tab or a carriage return first) starts
          with a single quote

Progress (records written, rate) goes to stderr, then a summary. On a
failure the output stops where it failed and the exit status is 1.`,
		Example: `  tally export events --site k3v9x0q2m1ab --from 2026-05-01 --to 2026-05-31 > may.ndjson
  tally export events --site k3v9x0q2m1ab --from 2026-05-01 --to 2026-05-01 --format csv > day.csv
  tally export events --site k3v9x0q2m1ab --from 2026-05-01 --to 2026-05-31 --timezone UTC | gzip > may.ndjson.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&run.site, "site", "", "site id")
	f.StringVar(&run.from, "from", "", "first day, YYYY-MM-DD")
	f.StringVar(&run.to, "to", "", "last day, YYYY-MM-DD (included)")
	f.StringVar(&run.format, "format", string(export.NDJSON), "ndjson or csv")
	f.StringVar(&run.timezone, "timezone", "", "IANA time zone of the days (default: the site's)")
	requireFlags(cmd, "site", "from", "to")
	return cmd
}

func (run exportEventsRun) run(cmd *cobra.Command) error {
	format, err := export.ParseFormat(run.format)
	if err != nil {
		return err
	}
	q := url.Values{"site_id": {run.site}, "date_from": {run.from}, "date_to": {run.to}}
	if run.timezone != "" {
		q.Set("timezone", run.timezone)
	}
	req, err := stats.ParseRequest(q, export.EventsEndpoint)
	if err != nil {
		return err
	}
	e, err := loadEnv(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	pg, err := e.postgres(ctx)
	if err != nil {
		return err
	}
	defer pg.Close()
	site, err := siteNamed(ctx, pg, req.SiteID, "site_id")
	if err != nil {
		return err
	}
	ch, err := e.clickhouse(ctx)
	if err != nil {
		return err
	}
	defer ch.Close()
	enc, err := export.NewEventEncoder(format, e.out)
	if err != nil {
		return err
	}
	x := export.NewEvents(nil, ch).Of(stats.RangeOf(site, req))
	p := newExportProgress(cmd.ErrOrStderr(), x.Range)
	n, err := x.WriteTo(ctx, enc, p.update)
	if err != nil {
		_ = enc.Flush() // the output ends with the last whole record written
	}
	p.done(n, err)
	return err
}

// exportProgress reports an export on stderr: on a terminal one line kept
// up to date, else a line every 10 s; then a summary.
type exportProgress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	last     time.Time
	expected int64
}

func newExportProgress(w io.Writer, rg stats.Range) *exportProgress {
	p := &exportProgress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	fmt.Fprintf(w, "exporting the events of site %s from %s to %s (%s)\n", rg.Site.ID,
		rg.From.Format(time.RFC3339), rg.To.Format(time.RFC3339), rg.Timezone)
	return p
}

func (p *exportProgress) update(pr export.Progress) {
	p.expected = pr.Expected
	now := time.Now()
	if pr.Written == 0 || (!p.terminal && now.Sub(p.last) < 10*time.Second) {
		return
	}
	p.last = now
	line := fmt.Sprintf("%s of about %s events, %s/s", thousands(pr.Written), thousands(pr.Expected),
		thousands(rate(pr.Written, now.Sub(p.start))))
	if p.terminal {
		fmt.Fprintf(p.w, "\r%-70s", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *exportProgress) done(n int64, err error) {
	took := time.Since(p.start)
	if p.terminal && !p.last.IsZero() {
		fmt.Fprintln(p.w)
	}
	if err != nil {
		fmt.Fprintf(p.w, "export stopped after %s events (%s): the output is incomplete\n", thousands(n),
			took.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(p.w, "exported %s events in %s (%s events/s)\n", thousands(n), took.Round(time.Millisecond),
		thousands(rate(n, took)))
}

func rate(n int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(n) / d.Seconds())
}

// thousands writes n with thousands separators: 1,234,567.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
