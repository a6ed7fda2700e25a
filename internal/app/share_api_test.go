package app_test

import (
	"context"
	"io"
	"net/http"
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

	// bad labels; a site of nobody's; the limit: 1 link, 19 more, the 21st is a 400
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
