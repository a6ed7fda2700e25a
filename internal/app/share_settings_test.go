package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// newShareURL is the URL a settings page shows once after a link was made.
var newShareURL = regexp.MustCompile(`<code id="new-share" data-secret>([^<]+)</code>`)

// Shared links in the Settings page: an owner makes one and sees its URL
// once (then only its label, date and revenue choice), deletes it; a
// viewer sees no section and is refused the form.
func TestShareSettingsForm(t *testing.T) {
	h := newHarness(t)
	viewerKey(t, h) // viewer@example.com, a viewer of the site
	settings := "/sites/" + string(h.siteID) + "/settings"
	owner := newWebUser(t, h)
	owner.login(h.email)
	if body := owner.expect(http.MethodGet, settings, nil, http.StatusOK); !strings.Contains(body, `id="shares"`) ||
		!strings.Contains(body, "No shared links yet.") {
		t.Fatal("the owner's settings page has no Shared links section")
	}
	// the form without its CSRF token changes nothing
	owner.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links", url.Values{"label": {"forged"}}, http.StatusForbidden)

	body := owner.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links",
		url.Values{"label": {"Board"}, "show_revenue": {"on"}, "csrf": {owner.csrf}}, http.StatusCreated)
	m := newShareURL.FindStringSubmatch(body)
	if m == nil || !strings.HasPrefix(m[1], h.srv.URL+"/share/") || len(strings.TrimPrefix(m[1], h.srv.URL+"/share/")) != 43 {
		t.Fatalf("the new link's URL is not on the page (%v)", m)
	}
	shareURL := m[1]
	token := strings.TrimPrefix(shareURL, h.srv.URL+"/share/")
	if owner.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the page with the new URL is cacheable: %q", owner.header.Get("Cache-Control"))
	}
	links, err := h.client(h.key).SharedLinks(context.Background(), string(h.siteID))
	if err != nil || len(links) != 1 || links[0].Label != "Board" || !links[0].ShowRevenue {
		t.Fatalf("the API lists %+v, %v; want the form's link", links, err)
	}
	// shown once: the page again lists the link, never its URL
	body = owner.expect(http.MethodGet, settings, nil, http.StatusOK)
	if strings.Contains(body, token) || !strings.Contains(body, `<tr data-share="`+links[0].ID+`">`) ||
		!strings.Contains(body, `data-revenue="true"`) || !strings.Contains(body, links[0].CreatedAt.UTC().Format("2006-01-02")) {
		t.Fatal("the settings page shows the token again, or not the link's row")
	}
	// a bad label is the form again with its message
	if body := owner.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links", url.Values{"label": {"  "}, "csrf": {owner.csrf}},
		http.StatusBadRequest); !strings.Contains(body, `class="error"`) {
		t.Error("a blank label is not reported")
	}

	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if body := viewer.expect(http.MethodGet, settings, nil, http.StatusOK); strings.Contains(body, `id="shares"`) {
		t.Error("a viewer's settings page shows the shared links")
	}
	viewer.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links", url.Values{"label": {"mine"}, "csrf": {viewer.csrf}},
		http.StatusForbidden)
	viewer.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links/"+links[0].ID+"/delete", url.Values{"csrf": {viewer.csrf}},
		http.StatusForbidden)
	if links, _ := h.client(h.key).SharedLinks(context.Background(), string(h.siteID)); len(links) != 1 {
		t.Fatalf("after the viewer's forms: %d links, want 1", len(links))
	}

	_, loc, _ := owner.do(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links/"+links[0].ID+"/delete", url.Values{"csrf": {owner.csrf}})
	if loc != settings+"?share_deleted=1#shares" {
		t.Fatalf("deleting went to %q", loc)
	}
	if links, _ := h.client(h.key).SharedLinks(context.Background(), string(h.siteID)); len(links) != 0 {
		t.Fatalf("after deleting: %d links", len(links))
	}
}
