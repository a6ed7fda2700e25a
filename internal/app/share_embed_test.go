package app_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/pkg/api"
)

// A shared dashboard in embed mode (embed=1) may be framed by any site and
// has no header (nor its theme form); its links and cards stay in embed
// mode, in the colours its URL names (theme=), whatever the browser's
// cookie. Without embed=1, and on a member's own dashboard whatever its
// URL, nothing may frame the page. Creating a link shows the HTML that
// embeds it.
func TestShareEmbed(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	ctx := context.Background()
	link, err := h.client(h.key).CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "Open startup"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/share/" + link.Token
	anon := newWebUser(t, h)
	framable := func(what string, want bool) {
		t.Helper()
		csp := anon.header.Get("Content-Security-Policy")
		switch {
		case want && (anon.header.Get("X-Frame-Options") != "" || !strings.Contains(csp, "frame-ancestors *;")):
			t.Errorf("%s: X-Frame-Options %q, CSP %q; want any site allowed to frame it", what, anon.header.Get("X-Frame-Options"), csp)
		case !want && (anon.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(csp, "frame-ancestors 'none'")):
			t.Errorf("%s: X-Frame-Options %q, CSP %q; want no framing", what, anon.header.Get("X-Frame-Options"), csp)
		}
		if anon.header.Get("Referrer-Policy") != "no-referrer" && strings.HasPrefix(what, "shared") {
			t.Errorf("%s: Referrer-Policy %q", what, anon.header.Get("Referrer-Policy"))
		}
	}

	page := anon.expect(http.MethodGet, base+"?"+shareWeek, nil, http.StatusOK)
	framable("shared page", false)
	if !strings.Contains(page, `<header class="top">`) || !strings.Contains(page, `action="/theme"`) {
		t.Error("the shared page has no header or theme form")
	}

	page = anon.expect(http.MethodGet, base+"?embed=1&"+shareWeek, nil, http.StatusOK)
	framable("shared page, embedded", true)
	if strings.Contains(page, `<header class="top">`) || strings.Contains(page, `action="/theme"`) || !strings.Contains(page, `<body class="embed">`) {
		t.Error("the embedded page has a header or a theme form")
	}
	if strings.Contains(page, "data-theme") {
		t.Error("the embedded page without theme= does not follow the system")
	}
	cards := regexp.MustCompile(`data-card="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(cards) == 0 {
		t.Fatal("the embedded page has no cards")
	}
	for _, m := range cards {
		u, err := url.Parse(html.UnescapeString(m[1]))
		if err != nil || !strings.HasPrefix(u.Path, base+"/cards/") || u.Query().Get("embed") != "1" {
			t.Errorf("card %s is not the link's in embed mode", m[1])
		}
	}
	// a card: its filter links stay embedded
	card := anon.expect(http.MethodGet, base+"/cards/sources?embed=1&"+shareWeek, nil, http.StatusOK)
	framable("shared card, embedded", true)
	if !strings.Contains(card, `href="`+base+`?embed=1&amp;from=2026-05-01&amp;range=custom&amp;source=Google&amp;to=2026-05-07"`) {
		t.Errorf("the embedded card's Google row does not stay embedded:\n%s", card)
	}

	// the URL's colours, not the cookie's
	anon.cookies["tally_theme"] = &http.Cookie{Name: "tally_theme", Value: "light"}
	page = anon.expect(http.MethodGet, base+"?embed=1&theme=dark&"+shareWeek, nil, http.StatusOK)
	if !strings.Contains(page, `data-theme="dark"`) || !strings.Contains(page, `theme=dark`) {
		t.Error("the embedded page with theme=dark is not dark, or its links lose the theme")
	}
	page = anon.expect(http.MethodGet, base+"?embed=1&theme=purple&"+shareWeek, nil, http.StatusOK)
	if strings.Contains(page, "data-theme") {
		t.Error("an unknown theme= is a theme")
	}
	page = anon.expect(http.MethodGet, base+"?"+shareWeek, nil, http.StatusOK)
	if !strings.Contains(page, `data-theme="light"`) {
		t.Error("outside embed mode the page is not in the cookie's colours")
	}

	// a member's dashboard is never framed, embed=1 or not
	owner := newWebUser(t, h)
	owner.login(h.email)
	page = owner.expect(http.MethodGet, "/sites/"+string(h.siteID)+"?embed=1", nil, http.StatusOK)
	if owner.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(owner.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		!strings.Contains(page, `<header class="top">`) {
		t.Error("a member's dashboard with embed=1 may be framed, or lost its header")
	}

	// a new link comes with its iframe
	settings := "/sites/" + string(h.siteID) + "/settings"
	owner.expect(http.MethodGet, settings, nil, http.StatusOK)
	body := owner.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/shared-links", url.Values{"label": {`"Investors" <board>`}, "csrf": {owner.csrf}}, http.StatusCreated)
	m := regexp.MustCompile(`<code id="new-share" data-secret>([^<]+)</code>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no new link shown")
	}
	want := html.EscapeString(`<iframe src="` + html.UnescapeString(m[1]) + `?embed=1" title="&#34;Investors&#34; &lt;board&gt;"`)
	if !strings.Contains(body, want) {
		t.Errorf("the new link's iframe is not shown; want %s in\n%s", want, body)
	}
}
