package revenue

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

func TestParseECB(t *testing.T) {
	hist := "Date,USD,JPY,BGN,GBP,CYP,XYZ,\n2026-05-08,1.1512,181.03,1.9558,0.8665,N/A,7,\n2026-05-07,1.1498,180.50,1.9558,0.8665,N/A,7,\n"
	daily := "Date, USD, JPY, \n8 May 2026, 1.1512, 181.03, \n"
	d := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	want := []model.Rate{
		{Currency: "USD", Day: d("2026-05-08"), Rate: "1.1512"}, {Currency: "JPY", Day: d("2026-05-08"), Rate: "181.03"}, {Currency: "GBP", Day: d("2026-05-08"), Rate: "0.8665"},
		{Currency: "USD", Day: d("2026-05-07"), Rate: "1.1498"}, {Currency: "JPY", Day: d("2026-05-07"), Rate: "180.50"}, {Currency: "GBP", Day: d("2026-05-07"), Rate: "0.8665"},
	}
	file, err := ParseECB([]byte(hist))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, file.Rates); diff != "" {
		t.Errorf("history file (-want +got):\n%s", diff)
	}
	// BGN (the lev, which the euro replaced in 2026) is no currency tally
	// takes payments in; CYP has no rate (N/A) and is not a skip
	if diff := cmp.Diff([]string{"BGN", "XYZ"}, file.Skipped); diff != "" {
		t.Errorf("skipped columns (-want +got):\n%s", diff)
	}
	file, err = ParseECB([]byte(daily))
	if got := file.Rates; err != nil || len(got) != 2 || got[0] != (model.Rate{Currency: "USD", Day: d("2026-05-08"), Rate: "1.1512"}) || len(file.Skipped) != 0 {
		t.Errorf("daily file: %+v, %v", file, err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("eurofxref-hist.csv")
	w.Write([]byte(hist))
	zw.Close()
	file, err = ParseECB(zbuf.Bytes())
	if err != nil || len(file.Rates) != 6 {
		t.Errorf("zip: %d rates, %v", len(file.Rates), err)
	}
	for name, bad := range map[string]string{
		"no date column": "Day,USD\n2026-05-08,1.1\n",
		"bad date":       "Date,USD\n05/08/2026,1.1\n",
		"bad rate":       "Date,USD\n2026-05-08,abc\n",
		"negative rate":  "Date,USD\n2026-05-08,-1\n",
		"zero rate":      "Date,USD\n2026-05-08,0.000\n",
		// numbers Go reads but the ledger's decimal column does not take as written
		"fraction":          "Date,USD\n2026-05-08,1/3\n",
		"hexadecimal":       "Date,USD\n2026-05-08,0x10\n",
		"binary":            "Date,USD\n2026-05-08,0b1\n",
		"digit separator":   "Date,USD\n2026-05-08,1_0\n",
		"exponent":          "Date,USD\n2026-05-08,1e3\n",
		"11 decimals":       "Date,USD\n2026-05-08,1.12345678901\n",
		"a row cut short":   "Date,USD,JPY,GBP,\n2026-05-08,1.1512,181.03,0.8665,\n2026-05-07,1.14",
		"a row of one cell": "Date,USD,JPY,\n2026-05-08\n",
	} {
		if _, err := ParseECB([]byte(bad)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// A rates file is bounded however it arrives: a zip whose .csv expands past
// 16 MiB is refused, not read into memory.
func TestRatesFileBounded(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("eurofxref-hist.csv")
	w.Write([]byte("Date,USD\n"))
	w.Write(bytes.Repeat([]byte("2026-05-08,1.1\n"), (maxRatesFile/15)+1000))
	zw.Close()
	if zbuf.Len() > 1<<20 {
		t.Fatalf("the test zip is %d bytes; it should expand, not be big", zbuf.Len())
	}
	if _, err := ParseECB(zbuf.Bytes()); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("a zip expanding past 16 MiB: %v, want a refusal", err)
	}
}

// Rates are fetched over redirects to https on the same host only.
func TestRatesClientRedirects(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/eurofxref.csv", http.StatusFound)
		case "/plain":
			http.Redirect(w, r, "http://"+r.Host+"/eurofxref.csv", http.StatusFound)
		case "/elsewhere":
			http.Redirect(w, r, "https://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			w.Write([]byte("Date,USD\n2026-05-08,1.1512\n"))
		}
	}))
	defer srv.Close()
	client := NewRatesClient()
	client.Transport = srv.Client().Transport
	if file, err := FetchECB(context.Background(), client, srv.URL+"/same"); err != nil || len(file.Rates) != 1 {
		t.Errorf("a redirect on the same host: %+v, %v", file, err)
	}
	for _, path := range []string{"/plain", "/elsewhere"} {
		if _, err := FetchECB(context.Background(), client, srv.URL+path); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: %v, want the redirect refused", path, err)
		}
	}
}

// ratesLedger answers rates by their UTC day; the rest of the ledger is nil.
type ratesLedger struct {
	Ledger
	rates map[string]string // "USD 2026-05-07" → rate
}

func (l ratesLedger) RateOn(_ context.Context, cur string, day time.Time) (string, time.Time, bool, error) {
	if r, ok := l.rates[cur+" "+day.Format(time.DateOnly)]; ok {
		return r, day, true, nil
	}
	return "", time.Time{}, false, errs.ErrNotFound
}

// A payment is converted at the rate of its UTC day, whatever the location
// of its time: a payment read back from Postgres comes in the process's
// zone (2026-05-07 23:30 UTC is Friday 01:30 in Berlin).
func TestRatesOfThePaymentsUTCDay(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s := NewService(ratesLedger{rates: map[string]string{"USD 2026-05-07": "1.10", "USD 2026-05-08": "1.20"}}, nil, nil, time.Now, nil)
	at := time.Date(2026, 5, 7, 23, 30, 0, 0, time.UTC).In(berlin)
	f, err := s.ratesFor(context.Background(), "USD", "EUR", at)
	if err != nil {
		t.Fatal(err)
	}
	base, rate, ok, err := f.amount(1100)
	if err != nil || !ok || base != 1000 || f.day.Format(time.DateOnly) != "2026-05-07" {
		t.Errorf("11.00 USD on 2026-05-07 (UTC): %d cents at %s of %s (%v, %v); want 1000 at 2026-05-07's 1.10",
			base, rate, f.day.Format(time.DateOnly), ok, err)
	}
}
