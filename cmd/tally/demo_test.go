package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/testenv"
)

// What "go tool task up" runs: the demo account, then the demo loaded once.
func TestDemoLoadsOnce(t *testing.T) {
	cfg := testenv.Config(t)
	var setup demoResult
	runCLI(t, cfg, &setup, "demo", "setup", "--json")
	var first struct {
		SiteID string `json:"site_id"`
		Result struct {
			Events     int            `json:"events"`
			Payments   map[string]int `json:"payments"`
			Refunds    int            `json:"refunds"`
			Currencies []string       `json:"currencies"`
			Goals      int            `json:"goals_created"`
		} `json:"result"`
	}
	runCLI(t, cfg, &first, "demo", "--events", "20000", "--if-empty", "--json")
	res := first.Result
	if first.SiteID != setup.SiteID || res.Events < 20_000 || len(res.Payments) != 4 || res.Goals != 5 ||
		len(res.Currencies) < 2 {
		t.Fatalf("first load into site %s (demo site %s): %+v", first.SiteID, setup.SiteID, res)
	}
	var second struct {
		Skipped bool   `json:"skipped"`
		Events  uint64 `json:"existing_events"`
	}
	runCLI(t, cfg, &second, "demo", "--events", "20000", "--if-empty", "--json")
	if !second.Skipped || second.Events != uint64(res.Events) {
		t.Fatalf("second load: %+v, want it skipped with the first load's %d events", second, res.Events)
	}
	ch, err := chstore.Open(context.Background(), app.CHOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if n, err := siteEvents(context.Background(), ch, "nosuchsite01"); err != nil || n != 0 {
		t.Fatalf("events of an unknown site: %d, %v", n, err)
	}
}

func TestDemoHelp(t *testing.T) {
	out, err := exec.Command(tallyBin, "demo", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("tally demo --help: %v\n%s", err, out)
	}
	for _, want := range []string{"--events", "--site", "--days", "--seed", "--payments", "--if-empty", "--json", "setup",
		"provider_a", "renewals", "refunds", "goals", "props", "go tool task up"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tally demo --help does not mention %s", want)
		}
	}
	out, err = exec.Command(tallyBin, "demo").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--events") {
		t.Errorf("tally demo without --events: %v, want its help\n%s", err, out)
	}
}
