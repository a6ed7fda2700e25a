package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// rollupsCLI runs tally rollups rebuild with args and returns stdout, stderr
// and the exit error.
func rollupsCLI(cfg *config.Config, args ...string) (string, string, error) {
	cmd := exec.Command(tallyBin, append([]string{"rollups", "rebuild"}, args...)...)
	cmd.Env = environ(cfg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// tally rollups rebuild rebuilds a site's rollups (or every site's) from the
// raw rows up to the start of yesterday, with progress on stderr, and leaves
// them as the views built them; it refuses an unknown site and a bad date.
// (That a rebuild mends a rollup left short: chstore's TestRollupsRebuild.)
func TestRollupsRebuildCommand(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.HTTPAddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	site, _ := setup(t, cfg)
	ctx := context.Background()
	ch, err := chstore.Open(ctx, app.CHOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	s := model.SiteID(site)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -10)
	google := model.Attribution{ReferrerSource: "Google", SourceType: "search", Device: "Desktop"}
	events := []model.EventRow{
		{SiteID: s, Timestamp: day.Add(10 * time.Hour), EventID: "e1", Name: "pageview", Pathname: "/", VisitorID: 1, SessionID: 1, Attribution: google},
		{SiteID: s, Timestamp: day.Add(10*time.Hour + time.Minute), EventID: "e2", Name: "signup", Pathname: "/", VisitorID: 1, SessionID: 1, Attribution: google},
		{SiteID: s, Timestamp: day.Add(30 * time.Hour), EventID: "e3", Name: "pageview", Pathname: "/a", VisitorID: 2, SessionID: 2},
		{SiteID: s, Timestamp: time.Now().UTC(), EventID: "e4", Name: "pageview", Pathname: "/today", VisitorID: 3, SessionID: 3},
	}
	sessions := []model.SessionRow{
		{SiteID: s, SessionID: 1, VisitorID: 1, Sign: 1, Version: 1, Start: events[0].Timestamp, End: events[1].Timestamp,
			Pageviews: 1, Events: 2, EntryPage: "/", ExitPage: "/", Attribution: google},
		{SiteID: s, SessionID: 2, VisitorID: 2, Sign: 1, Version: 1, Start: events[2].Timestamp, End: events[2].Timestamp,
			Pageviews: 1, Events: 1, IsBounce: true, EntryPage: "/a", ExitPage: "/a"},
	}
	if err := ch.InsertEvents(ctx, "", events); err != nil {
		t.Fatal(err)
	}
	if err := ch.InsertSessions(ctx, "", sessions); err != nil {
		t.Fatal(err)
	}
	figures := func() string {
		var out []string
		for _, q := range []string{
			"SELECT toUInt64(sum(pageview_count)) FROM site_quarters WHERE site_key = cityHash64(?)",
			"SELECT toUInt64(sum(event_count)) FROM site_quarters WHERE site_key = cityHash64(?)",
			"SELECT toUInt64(uniqCombinedMerge(17)(visitors)) FROM site_quarters WHERE site_key = cityHash64(?)",
			"SELECT toUInt64(sum(sessions)) FROM source_days WHERE site_key = cityHash64(?)",
			"SELECT toUInt64(sum(bounces)) FROM entry_days WHERE site_key = cityHash64(?)",
			"SELECT toUInt64(sum(pageviews)) FROM page_days WHERE site_key = cityHash64(?)",
		} {
			var n uint64
			if err := ch.QueryRow(ctx, q, site).Scan(&n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out = append(out, fmt.Sprint(n))
		}
		return strings.Join(out, " ")
	}
	// 3 pageviews (today's included), 4 events, 3 visitors; 2 sessions, 1 bounce
	const want = "3 4 3 2 1 3"
	if got := figures(); got != want {
		t.Fatalf("rollups from the views: %s, want %s", got, want)
	}

	stdout, stderr, err := rollupsCLI(cfg, "--site", site)
	if err != nil {
		t.Fatalf("rebuild: %v\n%s", err, stderr)
	}
	yesterday := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
	for _, line := range []string{
		fmt.Sprintf("rebuilding the rollups of site %s from %s to %s (UTC days, the last excluded)\n", site,
			day.Format(time.DateOnly), yesterday.Format(time.DateOnly)),
		"\nsite_quarters: 9 days in ", "\npage_days: 9 days in ", "\nexit_days: 9 days in ", "\nsite_days: 9 days in ",
		"\nlocation_days_blocks: 9 days in ", "\ncountry_days_blocks: 9 days in ", "\nevents_by_path: 9 days in ", "\nrebuilt 19 tables in ",
	} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	if got := figures(); got != want {
		t.Errorf("after the rebuild: %s, want %s", got, want)
	}

	// every site, from a later day; then a range that holds no closed day
	if _, stderr, err := rollupsCLI(cfg, "--from", day.AddDate(0, 0, 1).Format(time.DateOnly)); err != nil ||
		!strings.Contains(stderr, "rebuilding the rollups of every site from "+day.AddDate(0, 0, 1).Format(time.DateOnly)) {
		t.Errorf("rebuild of every site: %v\n%s", err, stderr)
	}
	if got := figures(); got != want {
		t.Errorf("after the rebuild of every site: %s, want %s", got, want)
	}
	if _, stderr, err := rollupsCLI(cfg, "--from", yesterday.Format(time.DateOnly)); err != nil || !strings.Contains(stderr, "nothing to rebuild") {
		t.Errorf("rebuild from yesterday: %v\n%s", err, stderr)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--site", "nosuchsite00"}, "site nosuchsite00 not found"},
		{[]string{"--from", "May 1"}, "from"},
		{[]string{"extra"}, "unknown command"},
	} {
		if _, stderr, err := rollupsCLI(cfg, tt.args...); err == nil || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: %v, stderr %q; want a failure naming %q", tt.args, err, stderr, tt.want)
		}
	}
	if out, err := exec.Command(tallyBin, "rollups", "rebuild", "--help").CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "Yesterday and today are left alone") || !strings.Contains(string(out), "--site") {
		t.Errorf("--help: %v\n%s", err, out)
	}
}
