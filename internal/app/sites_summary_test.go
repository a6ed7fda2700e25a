package app_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/pkg/api"
)

// The sites list shows each site's visitors of the last 7 days, their
// change, and a line of the days, each site's loaded on its own. Over
// seedShareSite's visits (3 visitors on May 5) on May 8: the 7 days are May
// 2..8, with 3 visitors, all on May 5, and none the 7 days before (no
// change to tell). A shared dashboard has no summary.
func TestSitesListSummaries(t *testing.T) {
	h := newHarness(t)
	seedShareSite(t, h)
	w := newWebUser(t, h)
	w.login(h.email)
	site := string(h.siteID)
	card := "/sites/" + site + "/cards/summary?range=7d&compare=1"
	list := w.expect(http.MethodGet, "/sites", nil, http.StatusOK)
	if !strings.Contains(list, `data-card="/sites/`+site+`/cards/summary?range=7d&amp;compare=1"`) {
		t.Fatalf("the sites list has no summary of %s:\n%s", site, list)
	}
	body := w.expect(http.MethodGet, card, nil, http.StatusOK)
	for _, want := range []string{
		`<strong data-metric="visitors" data-value="3">3</strong> visitors in the last 7 days`,
		`href="/sites/` + site + `?compare=1&amp;range=7d"`,
		`data-change="visitors">–</span>`,
		`<title>Visitors a day: 0, 0, 0, 3, 0, 0, 0</title>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the summary lacks %q:\n%s", want, body)
		}
	}
	// 30 days: May 8's 30 days hold the same 3; its label says so
	body = w.expect(http.MethodGet, "/sites/"+site+"/cards/summary?range=30d", nil, http.StatusOK)
	if !strings.Contains(body, `data-value="3">3</strong> visitors in the last 30 days`) || strings.Contains(body, "data-change") {
		t.Errorf("the 30 days' summary:\n%s", body)
	}
	link, err := h.client(h.key).CreateSharedLink(context.Background(), site, api.SharedLinkRequest{Label: "l"})
	if err != nil {
		t.Fatal(err)
	}
	newWebUser(t, h).expect(http.MethodGet, "/share/"+link.Token+"/cards/summary?range=7d", nil, http.StatusNotFound)
}

// The sites list shows 24 sites a page, in the order they were added, with
// links to the pages around; a search narrows it to the domains that hold
// the text, in any case.
func TestSitesListPages(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for i := range 25 {
		if _, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: h.email, Domain: fmt.Sprintf("shop-%02d.example", i)}); err != nil {
			t.Fatal(err)
		}
	}
	w := newWebUser(t, h)
	w.login(h.email)
	names := regexp.MustCompile(`class="site-name" href="/sites/[^"]+">([^<]+)</a>`)
	listed := func(path string) ([]string, string) {
		t.Helper()
		body := w.expect(http.MethodGet, path, nil, http.StatusOK)
		var out []string
		for _, m := range names.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out, body
	}
	// the harness's example.com first, then shop-00 … shop-22; shop-23 and -24 next
	first, body := listed("/sites")
	if len(first) != 24 || first[0] != "example.com" || first[23] != "shop-22.example" ||
		!strings.Contains(body, `href="/sites?page=2" rel="next"`) || strings.Contains(body, `rel="prev"`) || !strings.Contains(body, "26 sites") {
		t.Errorf("page 1: %v", first)
	}
	second, body := listed("/sites?page=2")
	if strings.Join(second, " ") != "shop-23.example shop-24.example" || !strings.Contains(body, `href="/sites" rel="prev"`) || strings.Contains(body, `rel="next"`) {
		t.Errorf("page 2: %v", second)
	}
	if past, _ := listed("/sites?page=99"); strings.Join(past, " ") != strings.Join(second, " ") {
		t.Errorf("page 99: %v, want the last page", past)
	}
	if found, body := listed("/sites?q=SHOP-1"); len(found) != 10 || found[0] != "shop-10.example" || strings.Contains(body, `rel="next"`) ||
		!strings.Contains(body, `value="SHOP-1"`) {
		t.Errorf("shop-1: %v", found)
	}
	if found, body := listed("/sites?q=nowhere"); len(found) != 0 || !strings.Contains(body, "No site's domain holds “nowhere”") {
		t.Errorf("nowhere: %v", found)
	}
}
