package app_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// sharePassword is the password of the protected links of these tests.
const sharePassword = "open sesame, board"

// isFieldError reports whether err is the API's 400 invalid_request naming field.
func isFieldError(err error, field string) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Code == "invalid_request" && e.Field == field
}

// Passwords of shared links through the API: made with or without one (8
// to 256 characters, else a 400 naming the field), listed as
// password_protected and never with the password or its hash, kept as an
// argon2id hash, set, changed and removed by owners and admins only.
func TestSharePasswordAPI(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)

	plain, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "public"})
	if err != nil || plain.PasswordProtected {
		t.Fatalf("a link without a password: %+v, %v", plain, err)
	}
	locked, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "board", Password: sharePassword})
	if err != nil || !locked.PasswordProtected || len(locked.Token) != 43 {
		t.Fatalf("a link with a password: %+v, %v", locked, err)
	}
	for _, pw := range []string{"1234567", strings.Repeat("x", 257), strings.Repeat("ü", 257)} {
		if _, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "bad", Password: pw}); !isFieldError(err, "password") {
			t.Errorf("a password of %d characters: %v, want 400 naming password", len([]rune(pw)), err)
		}
	}
	// 8 and 256 characters (not bytes) are the bounds
	for _, pw := range []string{"12345678", strings.Repeat("ü", 256)} {
		if l, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "bound", Password: pw}); err != nil || !l.PasswordProtected {
			t.Errorf("a password of %d characters: %+v, %v", len([]rune(pw)), l, err)
		}
	}

	// stored as an argon2id hash, never the password
	stored, err := h.app.PG.SharedLinkByHash(ctx, auth.HashKey(locked.Token))
	if err != nil || !strings.HasPrefix(stored.PasswordHash, "$argon2id$") || strings.Contains(stored.PasswordHash, sharePassword) {
		t.Fatalf("the store keeps %q, %v; want an argon2id hash", stored.PasswordHash, err)
	}
	// the list says which links ask for a password, and nothing of it
	list, err := c.SharedLinks(ctx, site)
	if err != nil || len(list) != 4 || list[0].PasswordProtected || !list[1].PasswordProtected || list[1].ID != locked.ID {
		t.Fatalf("the list %+v, %v", list, err)
	}
	status, body := getRaw(t, h, "/api/v1/sites/"+site+"/shared-links", h.key)
	if status != http.StatusOK || !strings.Contains(body, `"password_protected":true`) || !strings.Contains(body, `"password_protected":false`) {
		t.Fatalf("the list answers %d %s", status, body)
	}
	for _, secret := range []string{sharePassword, "argon2", stored.PasswordHash, "password_hash", `"password"`} {
		if strings.Contains(body, secret) {
			t.Errorf("the list holds %q: %s", secret, body)
		}
	}

	// set on a link without one, changed, removed; bad ones refused
	l, err := c.SetSharedLinkPassword(ctx, site, plain.ID, sharePassword)
	if err != nil || !l.PasswordProtected || l.ID != plain.ID || l.Label != "public" {
		t.Fatalf("setting a password: %+v, %v", l, err)
	}
	for _, pw := range []string{"", "short", strings.Repeat("x", 257)} {
		if _, err := c.SetSharedLinkPassword(ctx, site, plain.ID, pw); !isFieldError(err, "password") {
			t.Errorf("setting a password of %d characters: %v, want 400 naming password", len(pw), err)
		}
	}
	if status, body := postRawMethod(t, h, http.MethodPut, "/api/v1/sites/"+site+"/shared-links/"+plain.ID+"/password", `{}`); status != http.StatusBadRequest ||
		!strings.Contains(body, `"field":"password"`) {
		t.Errorf("a body without a password: %d %s", status, body)
	}
	before, _ := h.app.PG.SharedLinkByHash(ctx, auth.HashKey(plain.Token))
	if _, err := c.SetSharedLinkPassword(ctx, site, plain.ID, "another password"); err != nil {
		t.Fatal(err)
	}
	if after, _ := h.app.PG.SharedLinkByHash(ctx, auth.HashKey(plain.Token)); after.PasswordHash == before.PasswordHash {
		t.Error("changing the password kept its hash")
	}
	if l, err = c.RemoveSharedLinkPassword(ctx, site, plain.ID); err != nil || l.PasswordProtected {
		t.Fatalf("removing the password: %+v, %v", l, err)
	}
	if l, err = c.RemoveSharedLinkPassword(ctx, site, plain.ID); err != nil || l.PasswordProtected {
		t.Errorf("removing it again: %+v, %v; want the link, unchanged", l, err)
	}
	if stored, _ := h.app.PG.SharedLinkByHash(ctx, auth.HashKey(plain.Token)); stored.PasswordHash != "" {
		t.Error("a removed password's hash is still stored")
	}

	// viewers may not; unknown links and links of other sites are 404
	viewer := h.client(viewerKey(t, h))
	if _, err := viewer.SetSharedLinkPassword(ctx, site, plain.ID, sharePassword); !isAPIError(err, http.StatusForbidden, "forbidden") {
		t.Errorf("a viewer setting a password: %v, want 403", err)
	}
	if _, err := viewer.RemoveSharedLinkPassword(ctx, site, locked.ID); !isAPIError(err, http.StatusForbidden, "forbidden") {
		t.Errorf("a viewer removing a password: %v, want 403", err)
	}
	other, err := c.CreateSite(ctx, api.SiteRequest{Domain: "other.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []struct{ site, link string }{{site, "not-a-uuid"}, {site, "00000000-0000-0000-0000-000000000000"},
		{other.SiteID, locked.ID}} {
		if _, err := c.SetSharedLinkPassword(ctx, target.site, target.link, sharePassword); !isAPIError(err, http.StatusNotFound, "shared_link_not_found") {
			t.Errorf("setting the password of %s through %s: %v, want 404", target.link, target.site, err)
		}
		if _, err := c.RemoveSharedLinkPassword(ctx, target.site, target.link); !isAPIError(err, http.StatusNotFound, "shared_link_not_found") {
			t.Errorf("removing the password of %s through %s: %v, want 404", target.link, target.site, err)
		}
	}
	if list, _ := c.SharedLinks(ctx, site); !list[1].PasswordProtected {
		t.Error("the refused calls removed the board's password")
	}
}

// postRawMethod sends a JSON body with the harness's key.
func postRawMethod(t *testing.T, h *harness, method, path, body string) (int, string) {
	t.Helper()
	status, b := call(t, h, h.key, method, path, body)
	return status, string(b)
}

// checkShareCookie checks a cookie of a link: scoped to the link's path,
// HttpOnly, Secure (the tests' servers are not in development), SameSite
// Lax, or in embed mode SameSite=None and Partitioned.
func checkShareCookie(t *testing.T, what string, ck *http.Cookie, token string, embed bool) {
	t.Helper()
	switch {
	case ck == nil:
		t.Errorf("%s: no cookie", what)
	case ck.Path != "/share/"+token || !ck.HttpOnly || !ck.Secure:
		t.Errorf("%s: %+v; want Path=/share/<token>, HttpOnly, Secure", what, ck)
	case !embed && (ck.SameSite != http.SameSiteLaxMode || ck.Partitioned):
		t.Errorf("%s: SameSite %v, Partitioned %v; want Lax", what, ck.SameSite, ck.Partitioned)
	case embed && (ck.SameSite != http.SameSiteNoneMode || !ck.Partitioned):
		t.Errorf("%s: SameSite %v, Partitioned %v; want None and Partitioned in a frame", what, ck.SameSite, ck.Partitioned)
	}
}

// unlock posts a password to a link's form (its page fetched first, for
// the CSRF token) and returns the status, the Location and the body.
func (w *webUser) unlock(path, password string, header http.Header) (int, string, string) {
	w.t.Helper()
	w.doWith(http.MethodGet, path, nil, header)
	return w.doWith(http.MethodPost, path, url.Values{"password": {password}, "csrf": {w.csrf}}, header)
}

// A shared link with a password: its page is a form (401) and no data,
// its cards are refused; the form needs its CSRF token; a wrong password
// earns nothing; the right one a cookie of the link's path that opens the
// page and the cards, and no other link. The cookie stops opening the link
// when its password changes (to the same one too), is removed and set
// again, or the link is deleted.
func TestSharePasswordView(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)
	link, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "Investor relations", Password: sharePassword})
	if err != nil {
		t.Fatal(err)
	}
	twin, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "twin", Password: sharePassword})
	if err != nil {
		t.Fatal(err)
	}
	base := "/share/" + link.Token
	page, card := base+"?"+shareWeek, base+"/cards/overview?"+shareWeek
	anon := newWebUser(t, h)
	locked := func(what string) {
		t.Helper()
		body := anon.expect(http.MethodGet, page, nil, http.StatusUnauthorized)
		checkShareHeaders(t, what+": the form", anon.header)
		if !strings.Contains(body, `<input id="share-password" name="password" type="password"`) || !strings.Contains(body, `<label for="share-password">Password</label>`) {
			t.Errorf("%s: the page has no password form", what)
		}
		for _, data := range []string{"data-card", "example.com", "data-metric", "Investor", string(h.siteID)} {
			if strings.Contains(body, data) {
				t.Errorf("%s: the form shows %q", what, data)
			}
		}
		for _, path := range []string{card, base + "/cards/sources?" + shareWeek} {
			body = anon.expect(http.MethodGet, path, nil, http.StatusUnauthorized)
			checkShareHeaders(t, what+": a card", anon.header)
			if strings.Contains(body, "data-metric") || strings.Contains(body, "data-row") {
				t.Errorf("%s: a refused card shows data: %s", what, body)
			}
		}
		status, _, body := anon.doWith(http.MethodGet, card, nil, http.Header{"Accept": {"application/json"}})
		if status != http.StatusUnauthorized || !strings.Contains(body, `"code":"shared_link_locked"`) {
			t.Errorf("%s: a card as JSON: %d %s", what, status, body)
		}
	}

	locked("without a cookie")
	checkShareCookie(t, "the form's CSRF cookie", anon.cookies["tally_share_csrf"], link.Token, false)
	if !strings.Contains(anon.expect(http.MethodGet, page, nil, http.StatusUnauthorized), `action="`+base+`?from=2026-05-01&amp;range=custom&amp;to=2026-05-07"`) {
		t.Error("the form does not post to the link with its view")
	}
	// without its CSRF token, or with a forged one, no password is checked
	for _, csrf := range []string{"", "forged"} {
		status, _, body := anon.do(http.MethodPost, page, url.Values{"password": {sharePassword}, "csrf": {csrf}})
		if status != http.StatusForbidden || !strings.Contains(body, "The form has expired") || anon.cookies["tally_share_access"] != nil {
			t.Errorf("the form with csrf %q: %d, access cookie %v; want 403 and none", csrf, status, anon.cookies["tally_share_access"])
		}
	}
	// a wrong password: the form again, and nothing opens
	status, _, body := anon.unlock(page, "not the password", nil)
	if status != http.StatusUnauthorized || !strings.Contains(body, `<p class="error" role="alert">Wrong password.</p>`) || anon.cookies["tally_share_access"] != nil {
		t.Fatalf("a wrong password: %d, access cookie %v", status, anon.cookies["tally_share_access"])
	}
	locked("after a wrong password")

	// the right password: back to the view, with the link's cookie
	status, loc, _ := anon.unlock(page, sharePassword, nil)
	if status != http.StatusSeeOther || loc != base+"?from=2026-05-01&range=custom&to=2026-05-07" {
		t.Fatalf("the right password: %d to %q", status, loc)
	}
	access := anon.cookies["tally_share_access"]
	checkShareCookie(t, "the access cookie", access, link.Token, false)
	if access != nil && (access.MaxAge < int(sharing.AccessLifetime/time.Second)-60 || access.MaxAge > int(sharing.AccessLifetime/time.Second)) {
		t.Errorf("the access cookie lasts %d s, want %v", access.MaxAge, sharing.AccessLifetime)
	}
	if strings.Contains(access.Value, sharePassword) || strings.Contains(access.Value, "argon2") {
		t.Errorf("the access cookie holds the password or its hash: %q", access.Value)
	}
	if anon.cookies["tally_share_csrf"] != nil {
		t.Error("the form's CSRF cookie outlived the form")
	}
	if body := anon.expect(http.MethodGet, page, nil, http.StatusOK); !strings.Contains(body, "<h1>example.com</h1>") || !strings.Contains(body, `data-card="`+base+`/cards/overview`) {
		t.Error("the unlocked page is not the dashboard")
	}
	body = anon.expect(http.MethodGet, card, nil, http.StatusOK)
	checkShareHeaders(t, "an unlocked card", anon.header)
	if valueOf(t, body, "", "visitors") != "3" || valueOf(t, body, "", "pageviews") != "4" {
		t.Error("the unlocked overview card has not the site's numbers")
	}
	// posting again with access, or to a link without a password, goes to the dashboard
	if status, loc, _ := anon.do(http.MethodPost, page, url.Values{}); status != http.StatusSeeOther || loc != base+"?from=2026-05-01&range=custom&to=2026-05-07" {
		t.Errorf("posting with access: %d to %q", status, loc)
	}
	open, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if status, loc, _ := newWebUser(t, h).do(http.MethodPost, "/share/"+open.Token, url.Values{}); status != http.StatusSeeOther || loc != "/share/"+open.Token {
		t.Errorf("posting to a link without a password: %d to %q", status, loc)
	}
	unknown, _ := auth.NewLinkToken()
	newWebUser(t, h).expect(http.MethodPost, "/share/"+unknown, url.Values{"password": {sharePassword}}, http.StatusNotFound)

	// the cookie of one link opens no other, the same password notwithstanding
	// (this client sends every cookie everywhere; a browser would not even send it)
	anon.expect(http.MethodGet, "/share/"+twin.Token+"?"+shareWeek, nil, http.StatusUnauthorized)
	anon.expect(http.MethodGet, "/share/"+twin.Token+"/cards/overview?"+shareWeek, nil, http.StatusUnauthorized)
	anon.cookies["tally_share_access"] = access // dropped by the twin's form, as a cookie that opened nothing

	// a new password, the same one too, closes the link to the browsers of the former
	if _, err := c.SetSharedLinkPassword(ctx, site, link.ID, sharePassword); err != nil {
		t.Fatal(err)
	}
	anon.expect(http.MethodGet, card, nil, http.StatusUnauthorized)
	locked("after the password was set again")
	if anon.cookies["tally_share_access"] != nil {
		t.Error("the form kept a cookie that opens nothing")
	}
	if status, _, _ := anon.unlock(page, sharePassword, nil); status != http.StatusSeeOther {
		t.Fatalf("the password again: %d", status)
	}
	anon.expect(http.MethodGet, card, nil, http.StatusOK)

	// removed: open to all; set again: the cookie of before opens nothing
	stale := anon.cookies["tally_share_access"]
	if _, err := c.RemoveSharedLinkPassword(ctx, site, link.ID); err != nil {
		t.Fatal(err)
	}
	newWebUser(t, h).expect(http.MethodGet, card, nil, http.StatusOK)
	if _, err := c.SetSharedLinkPassword(ctx, site, link.ID, sharePassword); err != nil {
		t.Fatal(err)
	}
	anon.expect(http.MethodGet, card, nil, http.StatusUnauthorized)
	anon.cookies["tally_share_access"] = stale
	locked("with the cookie of a removed password")

	// deleted: 404, cookie or not
	if status, _, _ := anon.unlock(page, sharePassword, nil); status != http.StatusSeeOther {
		t.Fatalf("the password again: %d", status)
	}
	anon.expect(http.MethodGet, card, nil, http.StatusOK)
	if err := c.DeleteSharedLink(ctx, site, link.ID); err != nil {
		t.Fatal(err)
	}
	anon.expect(http.MethodGet, page, nil, http.StatusNotFound)
	anon.expect(http.MethodGet, card, nil, http.StatusNotFound)
	anon.expect(http.MethodPost, page, url.Values{"password": {sharePassword}, "csrf": {anon.csrf}}, http.StatusNotFound)
}

// A protected link in embed mode: the form in the frame (framable, in the
// URL's colours), posting and returning in embed mode, with cookies a
// browser keeps in another site's frame (SameSite=None, Partitioned), and
// a way to open the link in a tab of its own.
func TestSharePasswordEmbed(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	link, err := h.client(h.key).CreateSharedLink(context.Background(), string(h.siteID), api.SharedLinkRequest{Label: "embed", Password: sharePassword})
	if err != nil {
		t.Fatal(err)
	}
	base := "/share/" + link.Token
	page := base + "?embed=1&theme=dark&" + shareWeek
	anon := newWebUser(t, h)
	body := anon.expect(http.MethodGet, page, nil, http.StatusUnauthorized)
	if anon.header.Get("X-Frame-Options") != "" || !strings.Contains(anon.header.Get("Content-Security-Policy"), "frame-ancestors *;") {
		t.Errorf("the embedded form may not be framed: %v", anon.header)
	}
	if !strings.Contains(body, `<body class="embed">`) || !strings.Contains(body, `data-theme="dark"`) || strings.Contains(body, `<header class="top">`) {
		t.Error("the embedded form is not in embed mode, in the URL's colours")
	}
	if !strings.Contains(body, `action="`+base+`?embed=1&amp;from=2026-05-01&amp;range=custom&amp;theme=dark&amp;to=2026-05-07"`) {
		t.Error("the embedded form does not post in embed mode")
	}
	if !strings.Contains(body, `href="`+base+`?from=2026-05-01&amp;range=custom&amp;to=2026-05-07" target="_blank" rel="noopener"`) {
		t.Error("the embedded form offers no tab of its own")
	}
	checkShareCookie(t, "the embedded form's CSRF cookie", anon.cookies["tally_share_csrf"], link.Token, true)

	status, loc, _ := anon.unlock(page, sharePassword, nil)
	if status != http.StatusSeeOther || loc != base+"?embed=1&from=2026-05-01&range=custom&theme=dark&to=2026-05-07" {
		t.Fatalf("the right password in a frame: %d to %q", status, loc)
	}
	checkShareCookie(t, "the embedded access cookie", anon.cookies["tally_share_access"], link.Token, true)
	if body := anon.expect(http.MethodGet, loc, nil, http.StatusOK); !strings.Contains(body, `<body class="embed">`) || !strings.Contains(body, "data-card") {
		t.Error("the unlocked embedded page is not the embedded dashboard")
	}
	anon.expect(http.MethodGet, base+"/cards/overview?embed=1&"+shareWeek, nil, http.StatusOK)
}

// Tries of a link's password are limited per client address (whatever the
// link; TALLY_LOGIN_ATTEMPTS, 2 here, in 15 minutes) and per link (ten
// times as many, whatever the address): past either, the form is a 429,
// the right password too; a browser with access still opens the link.
func TestSharePasswordLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) {
		c.LoginAttempts = 2
		c.TrustedProxies = []string{"127.0.0.1/32"}
	}))
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)
	link, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "board", Password: sharePassword})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "other", Password: sharePassword})
	if err != nil {
		t.Fatal(err)
	}
	page := "/share/" + link.Token
	try := func(w *webUser, path, addr, password string, want int) string {
		t.Helper()
		status, _, body := w.unlock(path, password, http.Header{"X-Forwarded-For": {addr}})
		if status != want {
			t.Fatalf("%s from %s: %d, want %d", path, addr, status, want)
		}
		return body
	}

	// a browser that gave the password before the others' tries
	insider := newWebUser(t, h)
	try(insider, page, "198.51.100.1", sharePassword, http.StatusSeeOther)

	// per address: two tries, then 429 (the right password too, another link too)
	w := newWebUser(t, h)
	try(w, page, "203.0.113.1", "guess 1", http.StatusUnauthorized)
	try(w, page, "203.0.113.1", "guess 2", http.StatusUnauthorized)
	body := try(w, page, "203.0.113.1", sharePassword, http.StatusTooManyRequests)
	if !strings.Contains(body, "Too many attempts") || w.header.Get("Retry-After") == "" || w.cookies["tally_share_access"] != nil {
		t.Errorf("the refused try: no message, Retry-After %q or an access cookie", w.header.Get("Retry-After"))
	}
	checkShareHeaders(t, "the refused try", w.header)
	try(w, "/share/"+other.Token, "203.0.113.1", sharePassword, http.StatusTooManyRequests)

	// per link: 20 tries from any addresses (the insider's and w's first two
	// counted above; a try refused by its address counts not), then 429 from
	// a new address too
	for i := range 17 {
		try(newWebUser(t, h), page, "192.0.2."+strconv.Itoa(i+1), "guess", http.StatusUnauthorized)
	}
	try(newWebUser(t, h), page, "192.0.2.100", sharePassword, http.StatusTooManyRequests)
	// another link is not held back by this one's tries; the insider still reads
	try(newWebUser(t, h), "/share/"+other.Token, "192.0.2.101", sharePassword, http.StatusSeeOther)
	insider.expect(http.MethodGet, page+"/cards/devices", nil, http.StatusOK)
}
