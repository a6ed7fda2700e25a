package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/testenv"
)

// With TALLY_ECB_RATES_URL set, the server fetches the rates at start.
func TestRatesFetch(t *testing.T) {
	ecb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "Date, USD, JPY, \n8 May 2026, 1.1512, 181.03, \n")
	}))
	defer ecb.Close()
	cfg := testenv.Config(t)
	cfg.ECBRatesURL = ecb.URL + "/eurofxref.csv"
	h := newHarnessWith(t, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rate, _, _, err := h.app.PG.RateOn(context.Background(), "JPY", time.Date(2026, 5, 8, 0, 0, 0, 0, time.UTC))
		if err == nil {
			if rate != "181.0300000000" {
				t.Errorf("JPY rate %s, want 181.03", rate)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rates were not fetched: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
