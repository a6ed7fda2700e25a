package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/pkg/api"
)

// Shared links through the API: made with a URL and token shown once,
// listed without them, refused to a viewer, 20 a site, deleted.
func TestShareAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)

	created, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: " Investors ", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	// TALLY_PUBLIC_URL is not set in the tests: the URL is on the request's origin
	if created.ID == "" || created.Label != "Investors" || !created.ShowRevenue || len(created.Token) != 43 ||
		created.URL != h.srv.URL+"/share/"+created.Token || created.CreatedAt.IsZero() {
		t.Fatalf("created %+v", created)
	}
	list, err := c.SharedLinks(ctx, site)
	if err != nil || len(list) != 1 || list[0] != created.SharedLink {
		t.Fatalf("list = %+v, %v; want the created link", list, err)
	}
	status, body := getRaw(t, h, "/api/v1/sites/"+site+"/shared-links", h.key)
	if status != http.StatusOK || strings.Contains(body, created.Token) || strings.Contains(body, "token") || strings.Contains(body, "url") {
		t.Fatalf("the list answers %d %s: it must not hold the token", status, body)
	}

	// a viewer may neither list, make nor delete links
	viewer := h.client(viewerKey(t, h))
	if _, err := viewer.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "mine"}); !isAPIError(err, http.StatusForbidden, "forbidden") {
		t.Errorf("a viewer creating a link: %v, want 403", err)
	}
	if _, err := viewer.SharedLinks(ctx, site); !isAPIError(err, http.StatusForbidden, "forbidden") {
		t.Errorf("a viewer listing the links: %v, want 403", err)
	}
	if err := viewer.DeleteSharedLink(ctx, site, created.ID); !isAPIError(err, http.StatusForbidden, "forbidden") {
		t.Errorf("a viewer deleting a link: %v, want 403", err)
	}

	// bad labels; a site of nobody's; the limit: 1 link, 19 more, the 21st is a 409
	for _, label := range []string{"", strings.Repeat("x", 101), "a\nb"} {
		if _, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: label}); !isAPIError(err, http.StatusBadRequest, "invalid_request") {
			t.Errorf("label %q: %v, want 400", label, err)
		}
	}
	if _, err := c.CreateSharedLink(ctx, "nosuchsite", api.SharedLinkRequest{Label: "x"}); !isAPIError(err, http.StatusNotFound, "site_not_found") {
		t.Errorf("a link of an unknown site: %v, want 404", err)
	}
	for range 19 {
		if _, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "one too many"})
	if !isAPIError(err, http.StatusConflict, "too_many_shared_links") {
		t.Fatalf("the 21st link: %v, want 409 too_many_shared_links", err)
	}

	// deleted: gone from the list; deleting again, or a malformed id, is 404
	if err := c.DeleteSharedLink(ctx, site, created.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.SharedLinks(ctx, site); len(list) != 19 {
		t.Errorf("%d links after deleting one of 20", len(list))
	}
	for _, id := range []string{created.ID, "not-a-uuid"} {
		if err := c.DeleteSharedLink(ctx, site, id); !isAPIError(err, http.StatusNotFound, "shared_link_not_found") {
			t.Errorf("deleting %s: %v, want 404", id, err)
		}
	}
}

// getRaw sends a GET with a bearer token and returns the status and body.
func getRaw(t *testing.T, h *harness, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// The URLs tally shows without TALLY_PUBLIC_URL take their scheme from the
// one rule of the redirect to HTTPS: a client's own X-Forwarded-Proto
// changes neither a shared link's URL (API, dashboard) nor the install
// snippet; a trusted proxy's does.
func TestShownURLsTrustOnlyProxiesForTheScheme(t *testing.T) {
	untrusted := newHarness(t) // no trusted proxies: the test client is anybody
	trusted := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.TrustedProxies = []string{"127.0.0.1/32"} }))
	for _, tc := range []struct {
		name string
		h    *harness
		want string
	}{
		{"an untrusted client", untrusted, "http://"},
		{"a trusted proxy", trusted, "https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			host := strings.TrimPrefix(h.srv.URL, "http://")
			forwarded := http.Header{"X-Forwarded-Proto": {"https"}}

			req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/api/v1/sites/"+string(h.siteID)+"/shared-links",
				strings.NewReader(`{"label":"scheme"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+h.key)
			req.Header.Set("X-Forwarded-Proto", "https")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var created api.CreatedSharedLinkResponse
			if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusCreated {
				t.Fatalf("creating a link: %d %v", res.StatusCode, err)
			}
			if want := tc.want + host + "/share/" + created.Data.Token; created.Data.URL != want {
				t.Errorf("the API's link URL %q, want %q", created.Data.URL, want)
			}

			w := newWebUser(t, h)
			w.login(h.email)
			settings := "/sites/" + string(h.siteID) + "/settings"
			if _, _, body := w.doWith(http.MethodGet, settings, nil, forwarded); !strings.Contains(body, tc.want+host+"/js/tally.js") {
				t.Errorf("the install snippet is not on %s%s", tc.want, host)
			}
			form := url.Values{"label": {"scheme"}, "csrf": {w.csrf}}
			status, _, body := w.doWith(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links", form, forwarded)
			if status != http.StatusCreated || !strings.Contains(body, tc.want+host+"/share/") {
				t.Errorf("the dashboard's new link: %d, not on %s%s", status, tc.want, host)
			}
		})
	}
}
