package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/errs"
)

// FuzzValidate feeds arbitrary custom-event bodies (as the Events API
// decodes them) through validation: it must never panic, must answer every
// bad input with a 400-kind error naming a field, and what it accepts must
// respect the limits.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"site_id":"s","url":"https://example.com/a?utm_source=x","event_name":"signup","props":{"plan":"pro","n":3,"ok":true}}`,
		`{"site_id":"s","url":"https://example.com","referrer":"https://google.com/","user_agent":"Mozilla/5.0","ip_address":"81.2.69.142"}`,
		`{"site_id":"s","url":"https://example.com","event_name":"buy","revenue":{"amount":"49.99","currency":"EUR"}}`,
		`{"site_id":"s","url":"ftp://x","event_name":"pageview","props":{"a":{"b":1}}}`,
		`{"site_id":"","url":"","props":{"":null}}`,
		`{"props":{"a":1e999}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req struct {
			SiteID, URL, Referrer, UserAgent, IPAddress, VisitorID, EventName, CheckoutSessionID string
			Props                                                                                map[string]any
			Revenue                                                                              *struct{ Amount, Currency string }
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&req) != nil {
			return
		}
		in := Input{SiteID: req.SiteID, URL: req.URL, Referrer: req.Referrer, UserAgent: req.UserAgent, IPAddress: req.IPAddress,
			VisitorID: req.VisitorID, EventName: req.EventName, Props: req.Props, CheckoutSession: req.CheckoutSessionID,
			Pageview: req.EventName == "", Browser: true}
		if req.Revenue != nil {
			in.Revenue = &Revenue{Amount: req.Revenue.Amount, Currency: req.Revenue.Currency}
		}
		ev, err := validate(in)
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field == "" {
				t.Fatalf("rejection %v is not a 400 naming a field", err)
			}
			return
		}
		if len(ev.propKeys) > MaxProps || len(ev.propKeys) != len(ev.propValues) {
			t.Fatalf("accepted %d props", len(ev.propKeys))
		}
		for i, k := range ev.propKeys {
			if k == "" || utf8.RuneCountInString(k) > MaxPropKeyLen || utf8.RuneCountInString(ev.propValues[i]) > MaxPropValueLen {
				t.Fatalf("accepted prop %q=%q", k, ev.propValues[i])
			}
		}
		if ev.url == nil || (ev.url.Scheme != "http" && ev.url.Scheme != "https") || ev.url.Hostname() == "" {
			t.Fatalf("accepted url %q", req.URL)
		}
		if len(ev.userAgent) > MaxUserAgentLen || !utf8.ValidString(ev.userAgent) && utf8.ValidString(req.UserAgent) {
			t.Fatalf("user agent of %d bytes kept", len(ev.userAgent))
		}
		if ev.revenueAmount < 0 || (in.Revenue != nil && ev.revenueAmount == 0) {
			t.Fatalf("revenue %d accepted", ev.revenueAmount)
		}
	})
}
