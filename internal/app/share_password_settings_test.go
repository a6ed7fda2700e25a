package app_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/pkg/api"
)

// Passwords of shared links in the Settings page: the creation form's
// optional password (a bad one is the form again with its message), the
// list's marker, a password set on a link, changed, and removed; a viewer
// is refused each form, and a form without its CSRF token changes nothing.
func TestSharePasswordSettings(t *testing.T) {
	h := newHarness(t)
	viewerKey(t, h) // viewer@example.com, a viewer of the site
	ctx := context.Background()
	site := string(h.siteID)
	settings, links := "/sites/"+site+"/settings", "/sites/"+site+"/shared-links"
	owner := newWebUser(t, h)
	owner.login(h.email)
	owner.expect(http.MethodGet, settings, nil, http.StatusOK)
	listed := func() []api.SharedLink {
		t.Helper()
		list, err := h.client(h.key).SharedLinks(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}

	// a bad password: the form again with the rule, no link
	body := owner.expect(http.MethodPost, links, url.Values{"label": {"Board"}, "password": {"short"}, "csrf": {owner.csrf}}, http.StatusBadRequest)
	if !strings.Contains(body, `class="error"`) || !strings.Contains(body, "8 to 256 characters") || len(listed()) != 0 {
		t.Fatal("a short password is not reported, or made a link")
	}
	body = owner.expect(http.MethodPost, links, url.Values{"label": {"Board"}, "password": {sharePassword}, "csrf": {owner.csrf}}, http.StatusCreated)
	m := newShareURL.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no new link shown")
	}
	token := strings.TrimPrefix(m[1], h.srv.URL+"/share/")
	owner.expect(http.MethodPost, links, url.Values{"label": {"Public"}, "password": {""}, "csrf": {owner.csrf}}, http.StatusCreated)
	list := listed()
	if len(list) != 2 || !list[0].PasswordProtected || list[1].PasswordProtected {
		t.Fatalf("the API lists %+v; want the board's link with a password, the public one without", list)
	}
	newWebUser(t, h).expect(http.MethodGet, "/share/"+token, nil, http.StatusUnauthorized)

	// the list marks the link with a password, and offers to remove it
	body = owner.expect(http.MethodGet, settings, nil, http.StatusOK)
	for _, want := range []string{`<td data-password="true">password</td>`, `<td data-password="false">none</td>`,
		`action="/sites/` + site + `/shared-links/` + list[0].ID + `/password/delete"`, `<label for="share-password">Password (optional)</label>`,
		`<label for="share-new-password">New password</label>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the settings page has no %s", want)
		}
	}
	if strings.Contains(body, `/shared-links/`+list[1].ID+`/password/delete`) {
		t.Error("the settings page offers to remove a password the link has not")
	}
	if strings.Contains(body, sharePassword) || strings.Contains(body, "argon2") {
		t.Error("the settings page shows the password or its hash")
	}

	// set on the public link; a bad one, a form without its token, a viewer: refused
	set := links + "/password"
	owner.expect(http.MethodPost, set, url.Values{"link": {list[1].ID}, "password": {sharePassword}}, http.StatusForbidden)
	if body := owner.expect(http.MethodPost, set, url.Values{"link": {list[1].ID}, "password": {"short"}, "csrf": {owner.csrf}},
		http.StatusBadRequest); !strings.Contains(body, "8 to 256 characters") {
		t.Error("a short password is not reported")
	}
	owner.expect(http.MethodPost, set, url.Values{"link": {"00000000-0000-0000-0000-000000000000"}, "password": {sharePassword}, "csrf": {owner.csrf}},
		http.StatusNotFound)
	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	viewer.expect(http.MethodPost, set, url.Values{"link": {list[1].ID}, "password": {sharePassword}, "csrf": {viewer.csrf}}, http.StatusForbidden)
	viewer.expect(http.MethodPost, links+"/"+list[0].ID+"/password/delete", url.Values{"csrf": {viewer.csrf}}, http.StatusForbidden)
	if list := listed(); !list[0].PasswordProtected || list[1].PasswordProtected {
		t.Fatalf("the refused forms changed the links: %+v", list)
	}
	_, loc, _ := owner.do(http.MethodPost, set, url.Values{"link": {list[1].ID}, "password": {sharePassword}, "csrf": {owner.csrf}})
	if loc != settings+"?share_password=1#shares" {
		t.Fatalf("setting a password went to %q", loc)
	}
	if body := owner.expect(http.MethodGet, loc, nil, http.StatusOK); !strings.Contains(body, "Password set") {
		t.Error("no notice of the password set")
	}
	if list := listed(); !list[1].PasswordProtected {
		t.Fatal("the form set no password")
	}

	// removed: the board's link opens to all
	owner.expect(http.MethodPost, links+"/"+list[0].ID+"/password/delete", url.Values{}, http.StatusForbidden)
	_, loc, _ = owner.do(http.MethodPost, links+"/"+list[0].ID+"/password/delete", url.Values{"csrf": {owner.csrf}})
	if loc != settings+"?share_password_removed=1#shares" {
		t.Fatalf("removing the password went to %q", loc)
	}
	if list := listed(); list[0].PasswordProtected {
		t.Fatal("the form removed no password")
	}
	newWebUser(t, h).expect(http.MethodGet, "/share/"+token, nil, http.StatusOK)
	body = owner.expect(http.MethodGet, settings, nil, http.StatusOK)
	if n := len(regexp.MustCompile(`data-password="true"`).FindAllString(body, -1)); n != 1 {
		t.Errorf("%d links marked with a password, want 1 (the public one's now)", n)
	}
}
