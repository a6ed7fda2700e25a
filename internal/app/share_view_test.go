package app_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/sharing"
	"github.com/tally-analytics/tally/internal/testenv"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// lockedBuffer is a log's output, written by the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// shareWeek is the range the shared dashboards of these tests show.
const shareWeek = "range=custom&from=2026-05-01&to=2026-05-07"

// seedShareSite sends four pageviews of three visitors to the harness's
// site (UTC) on May 5, 2026:
//
//	a: /        10:00, then /pricing 10:01   one visit of two pages
//	b: /        11:00                        a bounce
//	c: /pricing 11:30, from Google           a bounce
//
// So the week May 1..7 has 3 visitors, 4 pageviews, 3 visits of which 2
// bounced (66.7 %); sources Direct 2 (a, b) and Google 1 (c); and the
// funnel / → /pricing is reached by a and b at step 1 (2) and by a alone at
// step 2 (1: c saw /pricing without /).
func seedShareSite(t *testing.T, h *harness) {
	t.Helper()
	ctx := context.Background()
	c := h.client(h.key)
	for _, ev := range []struct {
		at, visitor, path, referrer string
		ua                          int
	}{
		{"10:00", "a", "/", "", 0}, {"10:01", "a", "/pricing", "", 0},
		{"11:00", "b", "/", "", 1}, {"11:30", "c", "/pricing", "https://www.google.com/", 2},
	} {
		at, err := time.Parse(time.DateTime, "2026-05-05 "+ev.at+":00")
		if err != nil {
			t.Fatal(err)
		}
		h.clock.Set(at)
		if _, err := c.Pageview(ctx, api.PageviewRequest{SiteID: string(h.siteID), URL: "https://example.com" + ev.path,
			Referrer: ev.referrer, UserAgent: fixtureUAs[ev.ua].ua, VisitorID: ev.visitor}); err != nil {
			t.Fatal(err)
		}
	}
	h.waitCount(4, "SELECT count() FROM events WHERE site_id = ?", string(h.siteID))
	h.clock.Set(time.Date(2026, 5, 8, 9, 0, 0, 0, time.UTC))
}

// valueOf is the data-value of a card's metric, or of a column of a row.
func valueOf(t *testing.T, body, row, col string) string {
	t.Helper()
	re := regexp.MustCompile(`data-metric="` + regexp.QuoteMeta(col) + `" data-value="([^"]*)"`)
	if row != "" {
		re = regexp.MustCompile(`(?s)<tr data-row="` + regexp.QuoteMeta(row) + `">.*?data-col="` + regexp.QuoteMeta(col) + `" data-value="([^"]*)"`)
	}
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Errorf("no %s %s in the card:\n%.600s", row, col, body)
		return ""
	}
	return m[1]
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// checkShareHeaders checks the headers of every answer under /share.
func checkShareHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for name, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex, nofollow",
		"Cache-Control": "private, no-store", "X-Frame-Options": "DENY"} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s %q, want %q", what, name, got, want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("%s: CSP %q, want the dashboard's", what, csp)
	}
}

// A shared link's dashboard, opened without any cookie: the site's cards
// with the API's numbers, click-to-filter under the link, nothing of the
// settings, the download, the tracking health, or (without show_revenue)
// the revenue; the link's headers; a deleted or unknown token is the same
// 404; the token never reaches the server's log (a 503 is logged by the
// route's pattern).
func TestShareView(t *testing.T) {
	var logged lockedBuffer
	out := []io.Writer{&logged}
	if run := testenv.RunLog(); run != nil {
		out = append(out, run)
	}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(out...), &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := testenv.Config(t)
	stores := proxyStores(t, cfg)
	h := newHarnessLogged(t, cfg, log)
	seedShareSite(t, h)
	ctx := context.Background()
	c, site := h.client(h.key), string(h.siteID)
	funnel, err := c.CreateFunnel(ctx, api.FunnelRequest{SiteID: site, Name: "Pricing", Steps: []api.FunnelStep{
		{Type: "pageview", PagePath: "/"}, {Type: "pageview", PagePath: "/pricing"}}})
	if err != nil {
		t.Fatal(err)
	}
	public, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "public"})
	if err != nil {
		t.Fatal(err)
	}
	investors, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "investors", ShowRevenue: true})
	if err != nil {
		t.Fatal(err)
	}
	base := "/share/" + public.Token
	anon := newWebUser(t, h) // no cookie, ever: it never logs in

	// the page: the site's name and cards, all under the link
	page := anon.expect(http.MethodGet, base+"?"+shareWeek, nil, http.StatusOK)
	checkShareHeaders(t, "the page", anon.header)
	if len(anon.cookies) != 0 {
		t.Errorf("the shared page set cookies: %v", anon.cookies)
	}
	if !strings.Contains(page, "<h1>example.com</h1>") {
		t.Error("the shared page does not name the site")
	}
	cards := regexp.MustCompile(`data-card="([^"]+)"`).FindAllStringSubmatch(page, -1)
	var names []string
	for _, m := range cards {
		if !strings.HasPrefix(m[1], base+"/cards/") {
			t.Errorf("a card loads from %s, outside the link", m[1])
		}
		names = append(names, strings.SplitN(strings.TrimPrefix(m[1], base+"/cards/"), "?", 2)[0])
	}
	if got := strings.Join(names, ","); got != "overview,realtime,sources,pages,locations,devices,events,goals,funnels,journeys,retention" {
		t.Errorf("the shared page's cards: %s", got)
	}
	for _, hidden := range []string{"Download CSV", "/download", "/settings", `href="/sites`, "Log out", `action="/logout"`,
		`aria-label="Main"`, "card-health", "card-revenue", string(h.siteID)} {
		if strings.Contains(page, hidden) {
			t.Errorf("the shared page shows %q", hidden)
		}
	}
	if page := anon.expect(http.MethodGet, "/share/"+investors.Token+"?"+shareWeek, nil, http.StatusOK); !strings.Contains(page, "card-revenue") ||
		strings.Contains(page, "card-health") {
		t.Error("the link with show_revenue: no revenue card, or a tracking health card")
	}

	// the cards have the API's numbers for the same range (worked out in seedShareSite)
	week := client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07"}
	overview, err := c.Overview(ctx, week)
	if err != nil {
		t.Fatal(err)
	}
	if m := overview.Data.Metrics; m.Visitors != 3 || m.Pageviews != 4 || m.BounceRate != 66.7 {
		t.Fatalf("the API's overview %+v, want 3 visitors, 4 pageviews, 66.7 %% bounces", m)
	}
	card := anon.expect(http.MethodGet, base+"/cards/overview?"+shareWeek, nil, http.StatusOK)
	checkShareHeaders(t, "a card", anon.header)
	m := overview.Data.Metrics
	for metric, want := range map[string]string{"visitors": itoa64(m.Visitors), "pageviews": itoa64(m.Pageviews),
		"bounce_rate": strconv.FormatFloat(m.BounceRate, 'f', -1, 64)} {
		if got := valueOf(t, card, "", metric); got != want {
			t.Errorf("overview %s: the shared card %q, the API %s", metric, got, want)
		}
	}
	sources, err := c.Sources(ctx, week)
	if err != nil {
		t.Fatal(err)
	}
	card = anon.expect(http.MethodGet, base+"/cards/sources?"+shareWeek, nil, http.StatusOK)
	if len(sources.Data.Sources) != 2 {
		t.Fatalf("the API's sources %+v, want Direct and Google", sources.Data.Sources)
	}
	for _, row := range sources.Data.Sources {
		if got := valueOf(t, card, row.Source, "visitors"); got != itoa64(row.Visitors) {
			t.Errorf("source %s: the shared card %q visitors, the API %d", row.Source, got, row.Visitors)
		}
	}
	// click-to-filter stays under the link; the filtered card counts c alone
	if !strings.Contains(card, `href="`+base+"?from=2026-05-01&amp;range=custom&amp;source=Google&amp;to=2026-05-07") {
		t.Errorf("the Google row does not filter the shared dashboard:\n%.800s", card)
	}
	card = anon.expect(http.MethodGet, base+"/cards/overview?"+shareWeek+"&source=Google&compare=1", nil, http.StatusOK)
	if got := valueOf(t, card, "", "visitors"); got != "1" {
		t.Errorf("filtered by Google: %s visitors, want 1 (c)", got)
	}
	// the funnel without its revenue (public) and with it (investors)
	rep, err := c.FunnelReport(ctx, client.StatsParams{SiteID: site, DateFrom: "2026-05-01", DateTo: "2026-05-07", FunnelID: funnel.FunnelID})
	if err != nil || len(rep.Data.Steps) != 2 || rep.Data.Steps[0].Visitors != 2 || rep.Data.Steps[1].Visitors != 1 {
		t.Fatalf("the API's funnel %+v, %v; want 2 then 1", rep.Data.Steps, err)
	}
	card = anon.expect(http.MethodGet, base+"/cards/funnels?"+shareWeek, nil, http.StatusOK)
	if valueOf(t, card, "1", "visitors") != "2" || valueOf(t, card, "2", "visitors") != "1" || strings.Contains(card, `data-col="revenue"`) ||
		strings.Contains(card, "/settings") {
		t.Error("the public funnel card: wrong numbers, or revenue, or a settings link")
	}
	card = anon.expect(http.MethodGet, "/share/"+investors.Token+"/cards/funnels?"+shareWeek, nil, http.StatusOK)
	if !strings.Contains(card, `data-col="revenue"`) {
		t.Error("the funnel card of a link with show_revenue has no revenue")
	}
	if card := anon.expect(http.MethodGet, base+"/cards/goals?"+shareWeek, nil, http.StatusOK); strings.Contains(card, "/settings") {
		t.Error("the shared goals card links to the settings")
	}

	// what the link does not show, and no other site through it
	other, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: "other.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		base + "/cards/revenue":                                        http.StatusNotFound,
		base + "/cards/health":                                         http.StatusNotFound,
		"/share/" + investors.Token + "/cards/health":                  http.StatusNotFound,
		"/share/" + investors.Token + "/cards/revenue?" + shareWeek:    http.StatusOK,
		base + "/sites/" + string(other.ID) + "/cards/overview":        http.StatusNotFound,
		base + "/cards/nope":                                           http.StatusNotFound,
		base + "/download":                                             http.StatusNotFound,
		"/sites/" + string(other.ID) + "/cards/overview?share=" + base: http.StatusSeeOther, // no session: the login
	} {
		anon.expect(http.MethodGet, path, nil, want)
		checkShareHeadersIfShared(t, path, anon.header)
	}
	// a site_id in the query names nothing: the link's site it is
	card = anon.expect(http.MethodGet, base+"/cards/overview?"+shareWeek+"&site_id="+string(other.ID), nil, http.StatusOK)
	if got := valueOf(t, card, "", "visitors"); got != "3" {
		t.Errorf("with another site's id in the query: %s visitors, want the link's site's 3", got)
	}
	// cards count against the link's allowance (TALLY_SHARE_PER_HOUR), not the owner's stats allowance
	if got := anon.header.Get("X-RateLimit-Limit"); got != strconv.Itoa(h.cfg.SharePerHour) {
		t.Errorf("a shared card counts against a limit of %s, want the link's %d", got, h.cfg.SharePerHour)
	}

	// ClickHouse away: the card is a 503, logged by its route's pattern
	stores.ch.Down()
	anon.expect(http.MethodGet, base+"/cards/overview?"+shareWeek, nil, http.StatusServiceUnavailable)
	stores.ch.Up()
	if !strings.Contains(logged.String(), "route=/share/:token/cards/:card") {
		t.Errorf("the 503 of a shared card is not logged by its route's pattern:\n%s", logged.String())
	}

	// an unknown token and a deleted link's are the same 404
	unknown, _ := auth.NewLinkToken()
	_, _, never := anon.do(http.MethodGet, "/share/"+unknown, nil)
	anon.expect(http.MethodGet, "/share/"+unknown, nil, http.StatusNotFound)
	checkShareHeaders(t, "an unknown link", anon.header)
	anon.expect(http.MethodGet, "/share/"+unknown+"/cards/overview", nil, http.StatusNotFound)
	anon.expect(http.MethodGet, "/share/short", nil, http.StatusNotFound)
	if err := c.DeleteSharedLink(ctx, site, public.ID); err != nil {
		t.Fatal(err)
	}
	_, _, deleted := anon.do(http.MethodGet, base, nil)
	anon.expect(http.MethodGet, base, nil, http.StatusNotFound)
	anon.expect(http.MethodGet, base+"/cards/overview?"+shareWeek, nil, http.StatusNotFound)
	if deleted != never {
		t.Error("a deleted link's page differs from a never-existing one's")
	}
	// deleting the site deletes its links
	anon.expect(http.MethodGet, "/share/"+investors.Token, nil, http.StatusOK)
	if _, err := c.DeleteSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	anon.expect(http.MethodGet, "/share/"+investors.Token, nil, http.StatusNotFound)

	// the server logged none of the tokens
	written := logged.String()
	for _, token := range []string{public.Token, investors.Token, unknown} {
		if strings.Contains(written, token) {
			t.Errorf("the server's log holds a link's token:\n%s", written)
		}
	}
}

// checkShareHeadersIfShared checks the link's headers on a path under /share.
func checkShareHeadersIfShared(t *testing.T, path string, h http.Header) {
	t.Helper()
	if strings.HasPrefix(path, "/share/") {
		checkShareHeaders(t, path, h)
	}
}

// Cards through a link count against the link's hourly allowance (3 here):
// the fourth is a 429 with the limit's headers, while the owner's own
// dashboard and another link of the site are not held back.
func TestShareLimit(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.SharePerHour = 3 }))
	ctx := context.Background()
	first, err := h.client(h.key).CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "first"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.client(h.key).CreateSharedLink(ctx, string(h.siteID), api.SharedLinkRequest{Label: "second"})
	if err != nil {
		t.Fatal(err)
	}
	anon := newWebUser(t, h)
	card := "/share/" + first.Token + "/cards/devices"
	for i := range 3 {
		anon.expect(http.MethodGet, card, nil, http.StatusOK)
		if got := anon.header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(2-i) {
			t.Errorf("card %d: X-RateLimit-Remaining %s, want %d", i+1, got, 2-i)
		}
	}
	body := anon.expect(http.MethodGet, card, nil, http.StatusTooManyRequests)
	if !strings.Contains(body, "opened too often") || anon.header.Get("Retry-After") == "" || anon.header.Get("X-RateLimit-Limit") != "3" {
		t.Errorf("the refused card: %q, headers %v", body, anon.header)
	}
	checkShareHeaders(t, "a refused card", anon.header)
	// a program asking for JSON gets the API's envelope
	status, _, body := anon.doWith(http.MethodGet, card, nil, http.Header{"Accept": {"application/json"}})
	if status != http.StatusTooManyRequests || !strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("the refused card as JSON: %d %s", status, body)
	}
	// the page itself is not a card: it opens
	anon.expect(http.MethodGet, "/share/"+first.Token, nil, http.StatusOK)
	anon.expect(http.MethodGet, "/share/"+second.Token+"/cards/devices", nil, http.StatusOK)
	owner := newWebUser(t, h)
	owner.login(h.email)
	owner.expect(http.MethodGet, "/sites/"+string(h.siteID)+"/cards/devices", nil, http.StatusOK)
}

// A shared link's URL asked over plain HTTP is redirected to HTTPS with the
// headers of every answer under /share: the redirect is no cacheable page
// and carries the token to no Referer.
func TestShareRedirectToHTTPSHeaders(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.RedirectHTTPS = "true" }))
	owner := auth.Principal{UserID: h.userID, Scopes: model.AllScopes}
	link, err := h.app.Sharing.Create(context.Background(), owner, h.siteID, sharing.Input{Label: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/share/" + link.Token, "/share/" + link.Token + "/cards/pages", "/share/nosuchtoken"} {
		resp, err := noRedirect.Get(h.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPermanentRedirect || !strings.HasPrefix(resp.Header.Get("Location"), "https://") {
			t.Fatalf("%s over plain HTTP: %d to %q, want 308 to HTTPS", path, resp.StatusCode, resp.Header.Get("Location"))
		}
		checkShareHeaders(t, path+" over plain HTTP", resp.Header)
	}
}

// An error page offers the way back to the sites list to a login only: a
// visitor without one (of a shared link: an unknown link's 404, a card's
// 429) gets neither "Back to your sites" nor a brand linking to /sites,
// while a logged-in user's 404 offers both, on a shared link's path too.
func TestErrorPagesOfferSitesToLoginsOnly(t *testing.T) {
	h := newHarnessWith(t, testenvConfigWith(t, func(c *configT) { c.SharePerHour = 1 }))
	link, err := h.client(h.key).CreateSharedLink(context.Background(), string(h.siteID), api.SharedLinkRequest{Label: "one"})
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := auth.NewLinkToken()
	anon := newWebUser(t, h)
	card := "/share/" + link.Token + "/cards/devices"
	anon.expect(http.MethodGet, card, nil, http.StatusOK)
	for path, status := range map[string]int{"/share/" + unknown: http.StatusNotFound, card: http.StatusTooManyRequests,
		"/no-such-page": http.StatusNotFound} {
		if body := anon.expect(http.MethodGet, path, nil, status); strings.Contains(body, `href="/sites"`) {
			t.Errorf("%s without a login (%d) links to the sites:\n%s", path, status, body)
		}
	}
	owner := newWebUser(t, h)
	owner.login(h.email)
	for _, path := range []string{"/share/" + unknown, "/sites/no-such-site"} {
		body := owner.expect(http.MethodGet, path, nil, http.StatusNotFound)
		if !strings.Contains(body, `<a href="/sites">Back to your sites</a>`) {
			t.Errorf("%s with a login offers no way back to the sites:\n%s", path, body)
		}
	}
}
