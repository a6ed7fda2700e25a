package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/stats"
	"github.com/tally-analytics/tally/pkg/api"
)

func TestSitesAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)

	created, err := c.CreateSite(ctx, api.SiteRequest{Domain: "Shop.Example.com", Timezone: "Europe/Berlin", BaseCurrency: "eur"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Domain != "shop.example.com" || created.Timezone != "Europe/Berlin" || created.BaseCurrency != "EUR" ||
		created.Role != "owner" || created.SiteID == "" {
		t.Errorf("created %+v", created)
	}
	list, err := c.Sites(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v, %v; want the harness site and the new one", list, err)
	}
	updated, err := c.UpdateSite(ctx, created.SiteID, api.SiteRequest{Timezone: "Asia/Tokyo"})
	if err != nil || updated.Timezone != "Asia/Tokyo" || updated.Domain != "shop.example.com" || updated.BaseCurrency != "EUR" {
		t.Errorf("update of the time zone only: %+v, %v", updated, err)
	}
	for name, tc := range map[string]struct {
		req   api.SiteRequest
		field string
	}{
		"no domain":     {api.SiteRequest{}, "domain"},
		"url as domain": {api.SiteRequest{Domain: "https://x.com/a"}, "domain"},
		"bad timezone":  {api.SiteRequest{Domain: "x.com", Timezone: "Moon/Base"}, "timezone"},
		"server's zone": {api.SiteRequest{Domain: "x.com", Timezone: "localtime"}, "timezone"},
		"Factory zone":  {api.SiteRequest{Domain: "x.com", Timezone: "Factory"}, "timezone"},
		"bad currency":  {api.SiteRequest{Domain: "x.com", BaseCurrency: "EURO"}, "base_currency"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateSite(ctx, tc.req)
			wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		})
	}

	// roles: an admin may change, not delete; a viewer may do neither
	for _, u := range []struct {
		email string
		role  model.Role
	}{{"admin@example.com", model.RoleAdmin}, {"viewer@example.com", model.RoleViewer}} {
		if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: u.email, Password: password, Name: "U"}); err != nil {
			t.Fatal(err)
		}
		if err := h.app.Accounts.AddMember(ctx, model.SiteID(created.SiteID), u.email, u.role); err != nil {
			t.Fatal(err)
		}
	}
	adminKey, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: "admin@example.com", Name: "a"})
	viewerKey, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: "viewer@example.com", Name: "v"})
	if _, err := h.client(adminKey.Secret).UpdateSite(ctx, created.SiteID, api.SiteRequest{Domain: "www.shop.example.com"}); err != nil {
		t.Errorf("admin update: %v", err)
	}
	_, err = h.client(adminKey.Secret).DeleteSite(ctx, created.SiteID)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = h.client(viewerKey.Secret).UpdateSite(ctx, created.SiteID, api.SiteRequest{Timezone: "UTC"})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	if got, err := h.client(viewerKey.Secret).Site(ctx, created.SiteID); err != nil || got.Role != "viewer" {
		t.Errorf("viewer reads the site: %+v, %v", got, err)
	}
	statsKey, _ := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "s", Scopes: []model.Scope{model.ScopeStatsRead}})
	_, err = h.client(statsKey.Secret).Sites(ctx)
	wantError(t, err, http.StatusForbidden, "forbidden", "")

	// the base currency is fixed once payments were converted into it
	if _, err := c.Payment(ctx, payment(created.SiteID, "100", "EUR")); err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateSite(ctx, created.SiteID, api.SiteRequest{BaseCurrency: "USD"})
	wantError(t, err, http.StatusConflict, "conflict", "base_currency")
}

// Deleting a site removes it at once and its data in the background.
func TestSiteDeletion(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.client(h.key)
	site := string(h.siteID)
	h.clock.Set(time.Now().UTC())
	for i := range 5 {
		req := pageview(h, "https://example.com/x")
		req.VisitorID = string(rune('a' + i))
		if _, err := c.Pageview(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateGoal(ctx, api.GoalRequest{SiteID: site, GoalName: "G", GoalType: "pageview", PagePath: "/x"}); err != nil {
		t.Fatal(err)
	}
	h.waitCount(5, "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(5, "SELECT toUInt64(sum(sign)) FROM sessions WHERE site_id = ?", site)
	// the materialised views rolled the pageviews up as they were inserted
	h.waitCount(5, "SELECT sum(pageviews) FROM page_days WHERE site_key = cityHash64(?)", site)
	h.waitCount(5, "SELECT uniqCombinedMerge("+stats.PageStatePrecision+")(visitors) FROM page_visitor_days WHERE site_key = cityHash64(?)", site)

	res, err := c.DeleteSite(ctx, site)
	if err != nil || res.Data.Status != "deleting" || res.Data.SiteID != site || res.Message == "" {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	_, err = c.Site(ctx, site)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = c.Goals(ctx, site)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")

	h.app.Deleter.Settle = 0
	h.clock.Set(time.Now().UTC().Add(time.Minute))
	if err := h.app.Deleter.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	h.waitCount(0, "SELECT count() FROM events WHERE site_id = ?", site)
	h.waitCount(0, "SELECT count() FROM sessions WHERE site_id = ?", site)
	h.waitCount(0, "SELECT count() FROM page_days WHERE site_key = cityHash64(?)", site)
	h.waitCount(0, "SELECT count() FROM page_visitor_days WHERE site_key = cityHash64(?)", site)
	keys, err := h.app.Redis.Keys(ctx, h.cfg.RedisPrefix+"*"+site+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Errorf("Redis still holds %v (%v)", keys, err)
	}
	pending, err := h.app.PG.PendingDeletions(ctx)
	if err != nil || len(pending) != 0 {
		t.Errorf("deletion still pending: %v, %v", pending, err)
	}
}
