package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/app"
	"github.com/tally-analytics/tally/internal/chstore"
	"github.com/tally-analytics/tally/internal/config"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// exportCLI runs tally export events with args and returns stdout, stderr
// and the exit error.
func exportCLI(cfg *config.Config, args ...string) (string, string, error) {
	cmd := exec.Command(tallyBin, append([]string{"export", "events"}, args...)...)
	cmd.Env = environ(cfg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// tally export events writes a site's events of its own days (Europe/Paris,
// UTC+2 in May) from the stores, the records of the API's export byte for
// byte, with progress on stderr.
func TestExportEventsCommand(t *testing.T) {
	cfg := testenv.Config(t)
	cfg.HTTPAddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	site, key := setup(t, cfg)
	ch, err := chstore.Open(context.Background(), app.CHOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	at := func(s string) time.Time {
		ts, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	attr := model.Attribution{Hostname: "example.com", ReferrerSource: "acme-mail", SourceType: "referral",
		UTMSource: "acme-mail", UTMCampaign: "spring, sale", Device: "Desktop", Browser: "Firefox", BrowserVersion: "121.0",
		OS: "Linux", CountryCode: "FR", RegionCode: "FR-IDF", RegionName: "Île-de-France", City: "Paris"}
	s := model.SiteID(site)
	rows := []model.EventRow{
		{SiteID: s, Timestamp: at("2026-05-01 21:59:59"), EventID: "e0-before", Name: "pageview", Pathname: "/", VisitorID: 1, SessionID: 1},
		{SiteID: s, Timestamp: at("2026-05-01 22:00:00"), EventID: "e1", Name: "pageview", Pathname: "/landing",
			VisitorID: 7, SessionID: 70, Attribution: attr},
		{SiteID: s, Timestamp: at("2026-05-02 10:00:00"), EventID: "e2", Name: "Purchase", Pathname: "/checkout",
			VisitorID: 7, SessionID: 70, Attribution: attr, PropKeys: []string{"plan"}, PropValues: []string{"pro"},
			RevenueAmount: 4900, RevenueCurrency: "EUR"},
		{SiteID: s, Timestamp: at("2026-05-03 21:59:59"), EventID: "e3", Name: "pageview", Pathname: "/", VisitorID: 9, SessionID: 90},
		{SiteID: s, Timestamp: at("2026-05-03 22:00:00"), EventID: "e4-after", Name: "pageview", Pathname: "/", VisitorID: 9, SessionID: 91},
		{SiteID: "othersite001", Timestamp: at("2026-05-02 10:00:00"), EventID: "other", Name: "pageview", Pathname: "/"},
	}
	if err := ch.InsertEvents(context.Background(), "", rows); err != nil {
		t.Fatal(err)
	}
	ids := func(ndjson string) []string {
		var out []string
		sc := bufio.NewScanner(strings.NewReader(ndjson))
		for sc.Scan() {
			var rec api.ExportedEvent
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%v: %s", err, sc.Text())
			}
			out = append(out, rec.EventID)
		}
		return out
	}

	out, stderr, err := exportCLI(cfg, "--site", site, "--from", "2026-05-02", "--to", "2026-05-03")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if diff := cmp.Diff([]string{"e1", "e2", "e3"}, ids(out)); diff != "" {
		t.Errorf("the site's days May 2–3 in Paris (-want +got):\n%s", diff)
	}
	var purchase api.ExportedEvent
	if err := json.Unmarshal([]byte(strings.Split(out, "\n")[1]), &purchase); err != nil {
		t.Fatal(err)
	}
	amount, currency := int64(4900), "EUR"
	want := api.ExportedEvent{EventID: "e2", Timestamp: at("2026-05-02 10:00:00"), Name: "Purchase", Pathname: "/checkout",
		Hostname: "example.com", Source: "acme-mail", SourceType: "referral", UTMSource: "acme-mail", UTMCampaign: "spring, sale",
		Device: "Desktop", Browser: "Firefox", BrowserVersion: "121.0", OS: "Linux", Country: "FR", Region: "FR-IDF",
		RegionName: "Île-de-France", City: "Paris", Props: map[string]string{"plan": "pro"}, RevenueAmount: &amount,
		RevenueCurrency: &currency, SessionID: "0000000000000046", VisitorID: "0000000000000007"}
	if diff := cmp.Diff(want, purchase); diff != "" {
		t.Errorf("the purchase (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "exported 3 events in ") || !strings.Contains(stderr, "Europe/Paris") {
		t.Errorf("stderr does not report the export:\n%s", stderr)
	}

	utc, _, err := exportCLI(cfg, "--site", site, "--from", "2026-05-02", "--to", "2026-05-03", "--timezone", "UTC")
	if diff := cmp.Diff([]string{"e2", "e3", "e4-after"}, ids(utc)); err != nil || diff != "" {
		t.Errorf("UTC days: %v (-want +got):\n%s", err, diff)
	}

	csvOut, _, err := exportCLI(cfg, "--site", site, "--from", "2026-05-02", "--to", "2026-05-03", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(records) != 4 || records[0][0] != "event_id" || records[2][10] != "spring, sale" ||
		records[2][22] != `{"plan":"pro"}` || !strings.Contains(csvOut, `,"spring, sale",`) {
		t.Errorf("CSV: %v\n%s", err, csvOut)
	}

	// the API's export of the same range is the same file
	srv := startServer(t, cfg)
	defer srv.cmd.Process.Kill()
	for _, f := range []struct{ format, cli string }{{"ndjson", out}, {"csv", csvOut}} {
		var buf bytes.Buffer
		n, err := client.New("http://"+cfg.HTTPAddr, key).ExportEvents(context.Background(),
			client.ExportParams{SiteID: site, DateFrom: "2026-05-02", DateTo: "2026-05-03", Format: f.format}, &buf)
		if err != nil || n != 3 || buf.String() != f.cli {
			t.Errorf("%s: the API exported %d records (%v), the same bytes as the command: %v", f.format, n, err, buf.String() == f.cli)
		}
	}
}

func TestExportEventsCommandErrors(t *testing.T) {
	cfg := testenv.Config(t)
	site, _ := setup(t, cfg)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--site", "nosuchsite01", "--from", "2026-05-01", "--to", "2026-05-02"}, "site nosuchsite01 not found (--site)"},
		{[]string{"--site", site, "--from", "2026-05-03", "--to", "2026-05-02"}, "date_from must not be after date_to (--from)"},
		{[]string{"--site", site, "--from", "2026-05-01", "--to", "May 2"}, "(--to)"},
		{[]string{"--site", site, "--from", "2026-05-01", "--to", "2026-05-02", "--format", "xml"}, "must be ndjson or csv (--format)"},
		{[]string{"--site", site, "--from", "2026-05-01", "--to", "2026-05-02", "--timezone", "Mars/Olympus"}, "(--timezone)"},
		{[]string{"--site", site, "--from", "2026-05-01"}, `required flag(s) "to" not set`},
	} {
		out, stderr, err := exportCLI(cfg, tc.args...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("%v: %v, stdout %q, stderr %q; want exit 1 and %q", tc.args, err, out, stderr, tc.want)
		}
	}
}

func TestExportEventsHelp(t *testing.T) {
	out, err := exec.Command(tallyBin, "export", "events", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"--site", "--from", "--to", "--format", "--timezone", "ndjson", "csv", "stdout", "stderr",
		"never an IP address", "GET /api/v1/export/events"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tally export events --help does not mention %s", want)
		}
	}
}
