package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// list is an exclusions list of the Sites API's answer, nil when it has none
// (a viewer's).
func list(l *[]string) []string {
	if l == nil {
		return nil
	}
	return *l
}

// The Sites API sets a site's exclusions list by list, returns them
// normalised, and refuses a bad entry by its list and index.
func TestExclusionsSitesAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)

	got, err := c.Site(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExcludedPages == nil || len(list(got.ExcludedPages))+len(list(got.ExcludedAddresses))+len(list(got.ExcludedHosts)) != 0 {
		t.Errorf("a new site's exclusions: %q %q %q, want three empty lists", list(got.ExcludedPages), list(got.ExcludedAddresses), list(got.ExcludedHosts))
	}

	pages := []string{"/admin/**", " /preview/* ", "/login"}
	addresses := []string{"203.0.113.7", "198.51.100.99/24", "2001:DB8::/48"}
	hosts := []string{"Staging.Example.com", "*.preview.example.com"}
	updated, err := c.UpdateSite(ctx, site, api.SiteRequest{ExcludedPages: &pages, ExcludedAddresses: &addresses, ExcludedHosts: &hosts})
	if err != nil {
		t.Fatal(err)
	}
	type lists struct{ Pages, Addresses, Hosts []string }
	want := lists{[]string{"/admin/**", "/preview/*", "/login"}, []string{"203.0.113.7", "198.51.100.0/24", "2001:db8::/48"},
		[]string{"staging.example.com", "*.preview.example.com"}}
	if diff := cmp.Diff(want, lists{list(updated.ExcludedPages), list(updated.ExcludedAddresses), list(updated.ExcludedHosts)}); diff != "" {
		t.Errorf("PUT (-want +got):\n%s", diff)
	}
	got, err = c.Site(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, lists{list(got.ExcludedPages), list(got.ExcludedAddresses), list(got.ExcludedHosts)}); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}

	// a list left out keeps its value; an empty one clears it
	none := []string{}
	updated, err = c.UpdateSite(ctx, site, api.SiteRequest{ExcludedHosts: &none, Timezone: "Europe/Paris"})
	if err != nil {
		t.Fatal(err)
	}
	want.Hosts = []string{}
	if diff := cmp.Diff(want, lists{list(updated.ExcludedPages), list(updated.ExcludedAddresses), list(updated.ExcludedHosts)}); diff != "" {
		t.Errorf("hosts cleared (-want +got):\n%s", diff)
	}

	many := make([]string, 31)
	for i := range many {
		many[i] = fmt.Sprintf("/p%d", i)
	}
	for name, tc := range map[string]struct {
		req   api.SiteRequest
		field string
	}{
		"bad pattern": {api.SiteRequest{ExcludedPages: &[]string{"/a", "/b", "admin/**"}}, "excluded_pages.2"},
		"query":       {api.SiteRequest{ExcludedPages: &[]string{"/a?x=1"}}, "excluded_pages.0"},
		"31 pages":    {api.SiteRequest{ExcludedPages: &many}, "excluded_pages"},
		"bad CIDR":    {api.SiteRequest{ExcludedAddresses: &[]string{"10.0.0.0/8", "10.0.0.0/40"}}, "excluded_addresses.1"},
		"not an IP":   {api.SiteRequest{ExcludedAddresses: &[]string{"office.example.com"}}, "excluded_addresses.0"},
		"bad host":    {api.SiteRequest{ExcludedHosts: &[]string{"https://staging.example.com/"}}, "excluded_hosts.0"},
		"inner *":     {api.SiteRequest{ExcludedHosts: &[]string{"ok.example.com", "a.*.example.com"}}, "excluded_hosts.1"},
		"blank entry": {api.SiteRequest{ExcludedHosts: &[]string{" "}}, "excluded_hosts.0"},
		"on creation": {api.SiteRequest{Domain: "new.example", ExcludedPages: &[]string{"x"}}, "excluded_pages.0"},
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			if tc.req.Domain != "" {
				_, err = c.CreateSite(ctx, tc.req)
			} else {
				_, err = c.UpdateSite(ctx, site, tc.req)
			}
			wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		})
	}
	// nothing refused was saved
	got, err = c.Site(ctx, site)
	if err != nil || len(list(got.ExcludedPages)) != 3 || len(list(got.ExcludedAddresses)) != 3 || len(list(got.ExcludedHosts)) != 0 {
		t.Errorf("after the refusals: %+v, %v", got, err)
	}

	// a viewer sees the site without its exclusions (the addresses may be
	// the team's own), in the list as in the site itself
	viewer := h.client(viewerKey(t, h))
	if v, err := viewer.Site(ctx, site); err != nil || v.Role != "viewer" || v.ExcludedPages != nil || v.ExcludedAddresses != nil || v.ExcludedHosts != nil {
		t.Errorf("a viewer's site: %+v, %v; want no exclusions", v, err)
	}
	if sites, err := viewer.Sites(ctx); err != nil || len(sites) != 1 || sites[0].ExcludedAddresses != nil {
		t.Errorf("a viewer's list of sites: %+v, %v; want no exclusions", sites, err)
	}

	// another account's site: 404, as for one that does not exist
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "other@example.com", Password: password, Name: "O"}); err != nil {
		t.Fatal(err)
	}
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@example.com", Domain: "other.org"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateSite(ctx, string(other.ID), api.SiteRequest{ExcludedPages: &pages})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	if s, err := h.app.PG.SiteByID(ctx, other.ID); err != nil || !s.Exclusions.Empty() {
		t.Errorf("the other account's site: %+v, %v; want it unchanged", s.Exclusions, err)
	}
}

// Events that match a site's exclusions are answered as stored ones are
// (201 with an event id, a batch's success, the tracker's 202), are not
// stored, and count as excluded in tracking health and the metrics;
// payments are never excluded.
//
// Excluded: /admin/** (pages), 203.0.113.0/24 (addresses),
// *.staging.example.com (hosts); later also 127.0.0.1, the test client's
// connection address. On 2026-06-10, by the Events API: a pageview of
// /admin/users (excluded), of /pricing from 203.0.113.50 (excluded), of
// pr-7.staging.example.com/pricing (excluded), of /pricing from
// 198.51.100.1 (stored), a custom event on /admin/settings (excluded); a
// batch of /admin/a (excluded), /docs (stored), a staging page (excluded)
// and a malformed URL (refused, invalid_payload). By the tracker: /admin/users
// (excluded), /blog (stored); once the connection's address is excluded,
// /blog again (excluded). A payment of 4999 cents (recorded).
//
// So: accepted 1+1+1 = 3, excluded 4+2+2 = 8, refused 1, bots 0.
func TestExclusionsKeepEventsOut(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC))
	pages, addresses, hosts := []string{"/admin/**"}, []string{"203.0.113.0/24"}, []string{"*.staging.example.com"}
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{ExcludedPages: &pages, ExcludedAddresses: &addresses, ExcludedHosts: &hosts}); err != nil {
		t.Fatal(err)
	}

	pageview := func(url, ip string) api.PageviewRequest {
		return api.PageviewRequest{SiteID: site, URL: url, UserAgent: chromeUA, IPAddress: ip}
	}
	for _, req := range []api.PageviewRequest{
		pageview("https://example.com/admin/users", ""),
		pageview("https://example.com/pricing", "203.0.113.50"),
		pageview("https://pr-7.staging.example.com/pricing", ""),
		pageview("https://example.com/pricing", "198.51.100.1"),
	} {
		res, err := c.Pageview(ctx, req)
		if err != nil || !res.Success || res.EventID == "" {
			t.Fatalf("pageview %s %s: %+v, %v; want 201 with an event id", req.URL, req.IPAddress, res, err)
		}
	}
	if res, err := c.CustomEvent(ctx, api.CustomEventRequest{PageviewRequest: pageview("https://example.com/admin/settings", ""),
		EventName: "Signup"}); err != nil || !res.Success || res.EventID == "" {
		t.Fatalf("excluded custom event: %+v, %v", res, err)
	}
	batch, err := c.Batch(ctx, []api.CustomEventRequest{
		{PageviewRequest: pageview("https://example.com/admin/a", "")},
		{PageviewRequest: pageview("https://example.com/docs", "")},
		{PageviewRequest: pageview("https://qa.staging.example.com/docs", "")},
		{PageviewRequest: pageview("not a url", "")},
	})
	if err != nil || batch.Accepted != 3 || batch.Rejected != 1 {
		t.Fatalf("batch: %+v, %v; want 3 accepted, 1 rejected", batch, err)
	}
	for _, r := range batch.Results[:3] {
		if !r.Success || r.EventID == "" {
			t.Errorf("batch event %d: %+v, want success with an event id", r.Index, r)
		}
	}

	tracker := func(path string) {
		t.Helper()
		b, _ := json.Marshal(api.TrackerEvent{SiteID: site, EventName: "pageview", URL: "https://example.com" + path})
		if resp := postE(t, h, string(b)); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("/e %s: %d, want 202", path, resp.StatusCode)
		}
	}
	tracker("/admin/users")
	tracker("/blog")
	addresses = append(addresses, "127.0.0.1") // the test client's address: applies on the next event
	if _, err := c.UpdateSite(ctx, site, api.SiteRequest{ExcludedAddresses: &addresses}); err != nil {
		t.Fatal(err)
	}
	tracker("/blog")

	// sent from the excluded address too: money that moved is never excluded
	if _, err := c.Payment(ctx, payment(site, "4999", "USD")); err != nil {
		t.Fatalf("payment: %v", err)
	}

	h.waitCount(3, "SELECT count() FROM events WHERE site_id = ? AND name = 'pageview'", site)
	h.waitCount(1, "SELECT count() FROM payments WHERE site_id = ?", site)
	for query, want := range map[string]int64{
		"SELECT count() FROM events WHERE site_id = ? AND pathname IN ('/blog', '/docs', '/pricing') AND hostname = 'example.com'": 3,
		"SELECT count() FROM events WHERE site_id = ? AND (pathname LIKE '/admin%' OR hostname LIKE '%staging%')":                  0,
	} {
		if n := h.count(query, site); n != want {
			t.Errorf("%s: %d, want %d", query, n, want)
		}
	}
	if n := h.count("SELECT count() FROM events WHERE site_id = ? AND name = 'Signup'", site); n != 0 {
		t.Errorf("%d excluded custom events stored", n)
	}
	if n := h.count("SELECT count() FROM bot_events WHERE site_id = ?", site); n != 0 {
		t.Errorf("%d bot rows, want none", n)
	}

	if err := h.app.Ingest.FlushRefusals(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := c.Ingestion(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-06-09", DateTo: "2026-06-10", Timezone: "UTC"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.IngestionCounts{Accepted: 3, Refused: 1, Excluded: 8}); got.Data.Totals != want {
		t.Errorf("totals %+v, want %+v", got.Data.Totals, want)
	}
	if want := (api.IngestionPoint{Date: "2026-06-10", Accepted: 3, Refused: 1, Excluded: 8}); got.Data.Timeseries[1] != want {
		t.Errorf("June 10: %+v, want %+v", got.Data.Timeseries[1], want)
	}
	for _, r := range got.Data.RefusedByReason {
		if r.Reason == "excluded" || (r.Reason == "invalid_payload") != (r.Count == 1) {
			t.Errorf("refused by reason: %+v", got.Data.RefusedByReason)
		}
	}

	w := newWebUser(t, h)
	w.login(h.email)
	card := w.expect(http.MethodGet, "/sites/"+site+"/cards/health?range=custom&from=2026-06-09&to=2026-06-10", nil, http.StatusOK)
	if !strings.Contains(card, `data-col="excluded" data-value="8"`) {
		t.Errorf("the health card lacks the 8 excluded events:\n%s", card)
	}

	_, text := scrape(t, h, "")
	if got := metricValue(t, text, `tally_ingest_events_total{outcome="excluded"}`); got != 8 {
		t.Errorf(`tally_ingest_events_total{outcome="excluded"} = %v, want 8`, got)
	}
}

// The Settings page's Exclusions form: an owner saves the three lists (one
// entry a line, blank lines ignored) and sees them back; a bad line is the
// form again, naming its list and line and keeping what was typed; a form
// without its CSRF token changes nothing; a viewer has no such section.
func TestExclusionsSettingsForm(t *testing.T) {
	h := newHarness(t)
	viewerKey(t, h)
	ctx := context.Background()
	site := string(h.siteID)
	settings, action := "/sites/"+site+"/settings", "/sites/"+site+"/exclusions"
	owner := newWebUser(t, h)
	owner.login(h.email)
	if body := owner.expect(http.MethodGet, settings, nil, http.StatusOK); !strings.Contains(body, `id="exclusions"`) {
		t.Fatal("the owner's settings page has no Exclusions section")
	}
	form := url.Values{"excluded_pages": {"/admin/**\r\n\r\n/preview/*\r\n"}, "excluded_addresses": {"203.0.113.0/24\n2001:db8::1"},
		"excluded_hosts": {"*.staging.example.com"}}
	owner.expect(http.MethodPost, action, form, http.StatusForbidden)
	if s, _ := h.app.PG.SiteByID(ctx, h.siteID); !s.Exclusions.Empty() {
		t.Fatalf("a form without its token saved %+v", s.Exclusions)
	}

	form.Set("csrf", owner.csrf)
	status, loc, _ := owner.do(http.MethodPost, action, form)
	if status != http.StatusSeeOther || loc != settings+"?exclusions=1#exclusions" {
		t.Fatalf("save: %d to %q, want 303 to the settings' exclusions", status, loc)
	}
	body := owner.expect(http.MethodGet, settings+"?exclusions=1", nil, http.StatusOK)
	for _, want := range []string{"Exclusions saved", ">/admin/**\n/preview/*</textarea>", ">203.0.113.0/24\n2001:db8::1</textarea>",
		">*.staging.example.com</textarea>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page after saving lacks %q", want)
		}
	}
	got, err := h.client(h.key).Site(ctx, site)
	if err != nil || len(list(got.ExcludedPages)) != 2 || len(list(got.ExcludedAddresses)) != 2 || len(list(got.ExcludedHosts)) != 1 {
		t.Fatalf("the API reads %+v, %v", got, err)
	}

	// line 3 of the addresses (after a blank line) is no address
	form.Set("excluded_addresses", "203.0.113.0/24\n\n10.0.0.0/33")
	body = owner.expect(http.MethodPost, action, form, http.StatusBadRequest)
	if !strings.Contains(body, `Excluded addresses, line 3: &#34;10.0.0.0/33&#34; is not an IP address or CIDR range`) ||
		!strings.Contains(body, ">203.0.113.0/24\n\n10.0.0.0/33</textarea>") {
		t.Errorf("a bad address: the form does not name line 3, or lost what was typed:\n%s", body)
	}
	if got, _ := h.client(h.key).Site(ctx, site); len(list(got.ExcludedAddresses)) != 2 {
		t.Errorf("a refused form changed the addresses: %q", list(got.ExcludedAddresses))
	}

	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if body := viewer.expect(http.MethodGet, settings, nil, http.StatusOK); strings.Contains(body, `id="exclusions"`) ||
		strings.Contains(body, "203.0.113.0/24") {
		t.Error("a viewer sees the Exclusions section")
	}
	viewer.expect(http.MethodPost, action, url.Values{"excluded_pages": {""}, "csrf": {viewer.csrf}}, http.StatusForbidden)
}

// An outsider learns nothing of a site's exclusions from /e: an excluded
// event with revenue is answered as a stored one is, refused when its
// revenue is (over the site's cap) and with the same limit headers, so no
// page or host can be probed for being excluded.
func TestExcludedRevenueEventsAnsweredAsStored(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	pages, hosts := []string{"/admin/**"}, []string{"*.staging.example.com"}
	if _, err := h.client(h.key).UpdateSite(ctx, site, api.SiteRequest{ExcludedPages: &pages, ExcludedHosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	answer := func(url, amount string) string {
		t.Helper()
		resp := postE(t, h, `{"site_id":"`+site+`","event_name":"Purchase","url":"`+url+`","revenue":{"amount":`+amount+`,"currency":"USD"}}`)
		return fmt.Sprintf("%d limit=%s", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	for _, amount := range []string{"10.00", "99999999.00"} { // within the default cap, and over it
		stored := answer("https://example.com/pricing", amount)
		for _, url := range []string{"https://example.com/admin/orders", "https://pr-7.staging.example.com/pricing"} {
			if got := answer(url, amount); got != stored {
				t.Errorf("revenue %s on %s (excluded): %s; a stored event's: %s", amount, url, got, stored)
			}
		}
	}
}
