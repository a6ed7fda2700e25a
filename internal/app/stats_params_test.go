package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

var statsEndpoints = []string{"overview", "pages", "hostnames", "sources", "channels", "entry-pages", "exit-pages", "devices", "browsers",
	"operating-systems", "countries", "regions", "cities", "events", "event-properties", "journeys", "retention"}

// get calls a stats endpoint with raw query parameters.
func get(t *testing.T, h *harness, token, path string, q url.Values) (int, api.Error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+path+"?"+q.Encode(), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.Error
	if resp.StatusCode != http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%s: status %d without the error envelope", path, resp.StatusCode)
		}
	}
	return resp.StatusCode, e
}

func TestStatsParameterErrors(t *testing.T) {
	h := newHarness(t)
	site := string(h.siteID)
	valid := func(endpoint string) url.Values {
		q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}}
		switch endpoint {
		case "regions":
			q.Set("country", "US")
		case "cities":
			q.Set("region", "US-CA")
		case "event-properties":
			q.Set("event_name", "Signup")
		}
		return q
	}
	with := func(q url.Values, kv ...string) url.Values {
		c := url.Values{}
		for k, v := range q {
			c[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<delete>" {
				c.Del(kv[i])
			} else if kv[i+1] == "<twice>" {
				c[kv[i]] = []string{"DE", "FR"}
			} else {
				c.Set(kv[i], kv[i+1])
			}
		}
		return c
	}
	common := []struct {
		name        string
		kv          []string
		status      int
		code, field string
	}{
		{"missing site_id", []string{"site_id", "<delete>"}, 400, "invalid_request", "site_id"},
		{"unknown site", []string{"site_id", "nope"}, 404, "site_not_found", "site_id"},
		{"missing date_from", []string{"date_from", "<delete>"}, 400, "invalid_request", "date_from"},
		{"missing date_to", []string{"date_to", "<delete>"}, 400, "invalid_request", "date_to"},
		{"bad date format", []string{"date_from", "05/01/2026"}, 400, "invalid_request", "date_from"},
		{"impossible date", []string{"date_to", "2026-02-30"}, 400, "invalid_request", "date_to"},
		{"from after to", []string{"date_from", "2026-05-08"}, 400, "invalid_date_range", "date_from"},
		{"from equals to", []string{"date_from", "2026-05-07"}, 400, "invalid_date_range", "date_from"},
		{"over five years", []string{"date_from", "2020-01-01", "date_to", "2026-01-02"}, 400, "invalid_date_range", "date_to"},
		// ClickHouse's dates end in 2106: such a range could only read as empty
		{"after 2105", []string{"date_from", "2105-12-01", "date_to", "2106-01-01"}, 400, "invalid_request", "date_to"},
		{"before 2000", []string{"date_from", "1999-12-31"}, 400, "invalid_request", "date_from"},
		{"unknown timezone", []string{"timezone", "Mars/Olympus"}, 400, "invalid_request", "timezone"},
		{"Local is no timezone", []string{"timezone", "Local"}, 400, "invalid_request", "timezone"},
		{"the server's zone is no timezone", []string{"timezone", "localtime"}, 400, "invalid_request", "timezone"},
		{"leap seconds are no timezone", []string{"timezone", "right/UTC"}, 400, "invalid_request", "timezone"},
		{"empty utm_source", []string{"utm_source", ""}, 400, "invalid_request", "utm_source"},
		{"not a channel", []string{"channel", "Organic"}, 400, "invalid_request", "channel"},
		// a report reads one value of each: Germany's alone would answer
		// another question than the caller's
		{"country twice", []string{"country", "<twice>"}, 400, "invalid_request", "country"},
		{"site_id twice", []string{"site_id", "<twice>"}, 400, "invalid_request", "site_id"},
	}
	for _, ep := range statsEndpoints {
		for _, tc := range common {
			t.Run(ep+"/"+tc.name, func(t *testing.T) {
				status, e := get(t, h, h.key, "/api/v1/stats/"+ep, with(valid(ep), tc.kv...))
				if status != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field {
					t.Errorf("got %d %q field %q (%s), want %d %q field %q", status, e.Error.Code, e.Error.Field,
						e.Error.Message, tc.status, tc.code, tc.field)
				}
			})
		}
		t.Run(ep+"/valid", func(t *testing.T) {
			if status, e := get(t, h, h.key, "/api/v1/stats/"+ep, valid(ep)); status != 200 {
				t.Errorf("valid request: %d %+v", status, e)
			}
		})
	}
	specific := []struct {
		endpoint    string
		kv          []string
		code, field string
	}{
		{"overview", []string{"compare", "maybe"}, "invalid_request", "compare"},
		{"pages", []string{"limit", "0"}, "invalid_request", "limit"},
		{"pages", []string{"limit", "1001"}, "invalid_request", "limit"},
		{"pages", []string{"limit", "ten"}, "invalid_request", "limit"},
		{"pages", []string{"page", "0"}, "invalid_request", "page"},
		{"pages", []string{"page", "-3"}, "invalid_request", "page"},
		{"browsers", []string{"device", "Phone"}, "invalid_request", "device"},
		{"operating-systems", []string{"device", "Watch"}, "invalid_request", "device"},
		{"regions", []string{"country", "<delete>"}, "invalid_request", "country"},
		{"regions", []string{"country", "USA"}, "invalid_request", "country"},
		{"cities", []string{"region", "<delete>"}, "invalid_request", "region"},
		{"cities", []string{"region", "California"}, "invalid_request", "region"},
		{"events", []string{"event_name", ""}, "invalid_request", "event_name"},
		{"retention", []string{"interval", "hour"}, "invalid_request", "interval"},
		{"retention", []string{"interval", "year"}, "invalid_request", "interval"},
		// 2026-01-01..05-07 is 127 days, cohorts of a day past 90
		{"retention", []string{"interval", "day", "date_from", "2026-01-01"}, "invalid_date_range", "date_to"},
		// the weeks from Monday 2024-01-01 to 2026-05-04 are 123 (Monday to Monday is 854 days: 122 weeks, then its own)
		{"retention", []string{"interval", "week", "date_from", "2024-01-01"}, "invalid_date_range", "date_to"},
		// the default is a week: the same range without interval
		{"retention", []string{"interval", "<delete>", "date_from", "2024-01-01"}, "invalid_date_range", "date_to"},
	}
	for _, tc := range specific {
		t.Run(tc.endpoint+"/"+tc.field+"="+tc.kv[1], func(t *testing.T) {
			status, e := get(t, h, h.key, "/api/v1/stats/"+tc.endpoint, with(valid(tc.endpoint), tc.kv...))
			if status != 400 || e.Error.Code != tc.code || e.Error.Field != tc.field {
				t.Errorf("got %d %q field %q, want 400 %q field %q", status, e.Error.Code, e.Error.Field, tc.code, tc.field)
			}
		})
	}
	t.Run("realtime needs only site_id", func(t *testing.T) {
		if status, _ := get(t, h, h.key, "/api/v1/stats/realtime", url.Values{"site_id": {site}}); status != 200 {
			t.Errorf("status %d", status)
		}
		status, e := get(t, h, h.key, "/api/v1/stats/realtime", url.Values{})
		if status != 400 || e.Error.Field != "site_id" {
			t.Errorf("without site_id: %d %+v", status, e)
		}
	})
}

func TestStatsAccess(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	other, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "O"})
	if err != nil {
		t.Fatal(err)
	}
	otherSite, _ := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: other.Email, Domain: "other.com"})
	ingestOnly, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "ingest", Scopes: []model.Scope{model.ScopeEventsWrite}})
	viewerKey, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: other.Email, Name: "viewer"})
	if err := h.app.Accounts.AddMember(ctx, h.siteID, other.Email, model.RoleViewer); err != nil {
		t.Fatal(err)
	}
	login, err := h.client("").Login(ctx, h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range append(statsEndpoints[:len(statsEndpoints):len(statsEndpoints)], "realtime") {
		path := "/api/v1/stats/" + ep
		q := func(site string) url.Values {
			return url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"},
				"country": {"US"}, "region": {"US-CA"}, "event_name": {"Signup"}}
		}
		t.Run(ep, func(t *testing.T) {
			if status, _ := get(t, h, "", path, q(string(h.siteID))); status != 401 {
				t.Errorf("no credential: %d, want 401", status)
			}
			if status, e := get(t, h, ingestOnly.Secret, path, q(string(h.siteID))); status != 403 || e.Error.Code != "forbidden" {
				t.Errorf("key without stats:read: %d %s, want 403 forbidden", status, e.Error.Code)
			}
			if status, e := get(t, h, h.key, path, q(string(otherSite.ID))); status != 404 || e.Error.Code != "site_not_found" {
				t.Errorf("another account's site: %d %s, want 404 site_not_found", status, e.Error.Code)
			}
			if status, _ := get(t, h, viewerKey.Secret, path, q(string(h.siteID))); status != 200 {
				t.Errorf("a viewer reading stats: %d, want 200", status)
			}
			if status, _ := get(t, h, login.Token, path, q(string(h.siteID))); status != 200 {
				t.Errorf("with a login token: %d, want 200", status)
			}
		})
	}
}
