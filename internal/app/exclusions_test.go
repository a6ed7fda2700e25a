package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
)

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
	if got.ExcludedPages == nil || len(got.ExcludedPages)+len(got.ExcludedAddresses)+len(got.ExcludedHosts) != 0 {
		t.Errorf("a new site's exclusions: %q %q %q, want three empty lists", got.ExcludedPages, got.ExcludedAddresses, got.ExcludedHosts)
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
	if diff := cmp.Diff(want, lists{updated.ExcludedPages, updated.ExcludedAddresses, updated.ExcludedHosts}); diff != "" {
		t.Errorf("PUT (-want +got):\n%s", diff)
	}
	got, err = c.Site(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, lists{got.ExcludedPages, got.ExcludedAddresses, got.ExcludedHosts}); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}

	// a list left out keeps its value; an empty one clears it
	none := []string{}
	updated, err = c.UpdateSite(ctx, site, api.SiteRequest{ExcludedHosts: &none, Timezone: "Europe/Paris"})
	if err != nil {
		t.Fatal(err)
	}
	want.Hosts = []string{}
	if diff := cmp.Diff(want, lists{updated.ExcludedPages, updated.ExcludedAddresses, updated.ExcludedHosts}); diff != "" {
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
	if err != nil || len(got.ExcludedPages) != 3 || len(got.ExcludedAddresses) != 3 || len(got.ExcludedHosts) != 0 {
		t.Errorf("after the refusals: %+v, %v", got, err)
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
