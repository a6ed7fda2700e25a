package ingest

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/errs"
)

func TestValidateRejects(t *testing.T) {
	base := func() Input {
		return Input{Pageview: true, SiteID: "site1", URL: "https://example.com/a?utm_source=x"}
	}
	custom := func() Input { in := base(); in.Pageview, in.EventName = false, "signup"; return in }
	tooMany := map[string]any{}
	for i := range 11 {
		tooMany[strings.Repeat("k", i+1)] = "v"
	}
	tests := []struct {
		name        string
		in          Input
		code, field string
	}{
		{"missing site", func() Input { in := base(); in.SiteID = " "; return in }(), "invalid_request", "site_id"},
		{"overlong site", func() Input { in := base(); in.SiteID = strings.Repeat("s", 65); return in }(), "invalid_site_id", "site_id"},
		{"missing url", func() Input { in := base(); in.URL = ""; return in }(), "invalid_request", "url"},
		{"relative url", func() Input { in := base(); in.URL = "/pricing"; return in }(), "invalid_request", "url"},
		{"ftp url", func() Input { in := base(); in.URL = "ftp://example.com/x"; return in }(), "invalid_request", "url"},
		{"unparseable url", func() Input { in := base(); in.URL = "http://[::1"; return in }(), "invalid_request", "url"},
		{"overlong url", func() Input { in := base(); in.URL = "https://e.com/" + strings.Repeat("a", 8192); return in }(), "invalid_request", "url"},
		{"relative referrer", func() Input { in := base(); in.Referrer = "google"; return in }(), "invalid_request", "referrer"},
		{"overlong referrer", func() Input { in := base(); in.Referrer = "https://e.com/?q=" + strings.Repeat("a", 4096); return in }(), "invalid_request", "referrer"},
		{"bad checkout session", func() Input { in := base(); in.CheckoutSession = "a b"; return in }(), "invalid_request", "checkout_session_id"},
		{"bad ip", func() Input { in := base(); in.IPAddress = "300.1.1.1"; return in }(), "invalid_request", "ip_address"},
		{"overlong visitor", func() Input { in := base(); in.VisitorID = strings.Repeat("v", 129); return in }(), "invalid_request", "visitor_id"},
		{"missing event name", func() Input { in := custom(); in.EventName = ""; return in }(), "invalid_request", "event_name"},
		{"reserved event name", func() Input { in := custom(); in.EventName = "pageview"; return in }(), "invalid_request", "event_name"},
		{"overlong event name", func() Input { in := custom(); in.EventName = strings.Repeat("é", 121); return in }(), "invalid_request", "event_name"},
		{"11 props", func() Input { in := custom(); in.Props = tooMany; return in }(), "invalid_props", "props"},
		{"long prop key", func() Input { in := custom(); in.Props = map[string]any{strings.Repeat("k", 51): "v"}; return in }(), "invalid_props", "props." + strings.Repeat("k", 51)},
		{"empty prop key", func() Input { in := custom(); in.Props = map[string]any{"": "v"}; return in }(), "invalid_props", "props."},
		{"object prop", func() Input { in := custom(); in.Props = map[string]any{"plan": map[string]any{}}; return in }(), "invalid_props", "props.plan"},
		{"array prop", func() Input { in := custom(); in.Props = map[string]any{"tags": []any{"a"}}; return in }(), "invalid_props", "props.tags"},
		{"null prop", func() Input { in := custom(); in.Props = map[string]any{"plan": nil}; return in }(), "invalid_props", "props.plan"},
		{"huge number prop", func() Input { in := custom(); in.Props = map[string]any{"n": json.Number("1e400")}; return in }(), "invalid_props", "props.n"},
		{"long string prop", func() Input { in := custom(); in.Props = map[string]any{"s": strings.Repeat("x", 2001)}; return in }(), "invalid_props", "props.s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(tt.in)
			var e *errs.Error
			if !errors.As(err, &e) {
				t.Fatalf("validate = %v, want a %s error", err, tt.code)
			}
			if e.Kind != errs.Invalid || e.Code != tt.code || e.Field != tt.field {
				t.Errorf("got kind %v code %q field %q, want invalid %q field %q", e.Kind, e.Code, e.Field, tt.code, tt.field)
			}
		})
	}
}

// What the tracking script passes on from the browser as it found it only
// adds to an event: what tally cannot use is dropped, and the event counts.
func TestBrowserContextIsBestEffort(t *testing.T) {
	long := "https://example.com/search?q=" + strings.Repeat("a", 4096)
	for name, in := range map[string]Input{
		"a referrer longer than browsers send": {Referrer: long},
		"a referrer that is no URL":            {Referrer: "not a url"},
		"a stored visitor id too long":         {VisitorID: strings.Repeat("v", 129)},
		"the page's session_id with a space":   {CheckoutSession: "a b"},
		"the page's session_id too long":       {CheckoutSession: strings.Repeat("x", 256)},
	} {
		in.Pageview, in.Browser, in.SiteID, in.URL = true, true, "site1", "https://example.com/welcome"
		ev, err := validate(in)
		if err != nil {
			t.Errorf("%s: %v, want the event", name, err)
			continue
		}
		if ev.referrer != nil || ev.visitorID != "" || ev.checkoutSession != "" {
			t.Errorf("%s: kept referrer %v, visitor %q, checkout session %q", name, ev.referrer, ev.visitorID, ev.checkoutSession)
		}
	}
	// a long page URL counts too
	if _, err := validate(Input{Pageview: true, SiteID: "site1", URL: "https://example.com/?" + strings.Repeat("q", 4000)}); err != nil {
		t.Errorf("a page URL of 4,000 characters: %v", err)
	}
}

func TestValidateAccepts(t *testing.T) {
	props := map[string]any{"plan": "pro", "seats": json.Number("3"), "price": json.Number("49.90"), "trial": false,
		strings.Repeat("k", 50): strings.Repeat("v", 2000)}
	ev, err := validate(Input{SiteID: "site1", URL: "http://example.com", EventName: "Signup ✓", Props: props,
		IPAddress: "::ffff:81.2.69.142", UserAgent: strings.Repeat("a", 600)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{strings.Repeat("k", 50), "plan", "price", "seats", "trial"}, ev.propKeys); diff != "" {
		t.Errorf("prop keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{strings.Repeat("v", 2000), "pro", "49.9", "3", "false"}, ev.propValues); diff != "" {
		t.Errorf("prop values (-want +got):\n%s", diff)
	}
	if ev.ip.String() != "81.2.69.142" {
		t.Errorf("ip = %v, want the unmapped IPv4 address", ev.ip)
	}
	if len(ev.userAgent) != MaxUserAgentLen {
		t.Errorf("user agent kept %d bytes, want %d", len(ev.userAgent), MaxUserAgentLen)
	}
	if ev.name != "Signup ✓" || ev.pageview {
		t.Errorf("name %q pageview %v", ev.name, ev.pageview)
	}
}

// A number prop that is an integer is stored as written, every digit kept
// (2^53 + 1 is no float); -0 is 0; others are their float in plain decimals.
func TestNumberProps(t *testing.T) {
	for raw, want := range map[string]string{
		"9007199254740993": "9007199254740993", "12345678901234567890": "12345678901234567890",
		"-42": "-42", "-0": "0", "0": "0", "1.50": "1.5", "1e3": "1000", "-0.0": "0", "2.5e-1": "0.25",
	} {
		ev, err := validate(Input{SiteID: "site1", URL: "http://example.com", EventName: "e",
			Props: map[string]any{"n": json.Number(raw)}})
		if err != nil || len(ev.propValues) != 1 || ev.propValues[0] != want {
			t.Errorf("%s: %v, %v; want %q", raw, ev.propValues, err, want)
		}
	}
}

// The checkout session id comes from the field, else from the page's query
// (session_id, then checkout_session_id); one in the query that is no valid
// id is left out rather than refusing the event.
func TestCheckoutSessionFromTheURL(t *testing.T) {
	for _, tc := range []struct {
		field, url, want string
	}{
		{"", "https://example.com/thanks?session_id=cs_1", "cs_1"},
		{"", "https://example.com/thanks?checkout_session_id=cs_2", "cs_2"},
		{"", "https://example.com/thanks?session_id=cs_1&checkout_session_id=cs_2", "cs_1"},
		{"cs_field", "https://example.com/thanks?session_id=cs_1", "cs_field"},
		{"", "https://example.com/thanks?session_id=" + strings.Repeat("x", 256), ""},
		{"", "https://example.com/thanks?session_id=a%20b", ""},
		{"", "https://example.com/thanks", ""},
	} {
		ev, err := validate(Input{Pageview: true, SiteID: "site1", URL: tc.url, CheckoutSession: tc.field})
		if err != nil || ev.checkoutSession != tc.want {
			t.Errorf("field %q, url %s: %q, %v; want %q", tc.field, tc.url, ev.checkoutSession, err, tc.want)
		}
	}
}

// readParams reads what url.Values.Get reads, in one walk.
func TestReadParams(t *testing.T) {
	for _, raw := range []string{
		"", "utm_source=a&utm_source=b", "utm_source=&utm_source=b", "utm_medium=%41%20b+c&session_id=cs_1",
		"utm_campaign=x;y&utm_campaign=z", "utm_term=%zz&utm_term=ok", "utm%5Fcontent=q&checkout_session_id=c2",
		"&&utm_source&utm_medium=m=n", "a=1&b=2&session_id=s&checkout_session_id=t",
	} {
		var got [len(queryParams)]string
		readParams(raw, &got)
		q, _ := url.ParseQuery(raw)
		for i, name := range queryParams {
			if got[i] != q.Get(name) {
				t.Errorf("%q: %s = %q, url.Values says %q", raw, name, got[i], q.Get(name))
			}
		}
	}
}
