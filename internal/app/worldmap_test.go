package app_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
)

// A shared link's map, over the five visits of seedSegmentSite (GB 3, US
// 2): its countries filter the shared dashboard, under the link, as its
// rows do, and keep the view's filters. From Google (ann and dan of GB,
// ben of the US) GB's 2 is the top and the US's 1 the first class.
func TestCountriesMapOfASharedLink(t *testing.T) {
	h := seedSegmentSite(t)
	link, err := h.client(h.key).CreateSharedLink(context.Background(), string(h.siteID), api.SharedLinkRequest{Label: "public"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/share/" + link.Token
	anon := newWebUser(t, h)
	shaded := regexp.MustCompile(`<a href="([^"]+)" class="(map-\d)" data-country="(\w\w)" data-visitors="(\d+)"`)
	countries := func(card string) [][]string {
		var out [][]string
		for _, m := range shaded.FindAllStringSubmatch(card, -1) {
			out = append(out, m[1:])
		}
		return out
	}

	card := anon.expect(http.MethodGet, base+"/cards/locations?"+shareWeek, nil, http.StatusOK)
	gb := base + "?country=GB&amp;from=2026-05-01&amp;range=custom&amp;to=2026-05-07"
	us := base + "?country=US&amp;from=2026-05-01&amp;range=custom&amp;to=2026-05-07"
	if diff := cmp.Diff([][]string{{gb, "map-5", "GB", "3"}, {us, "map-4", "US", "2"}}, countries(card)); diff != "" {
		t.Errorf("the shared map's countries (-want +got):\n%s", diff)
	}
	for _, row := range []string{gb, us} {
		if !regexp.MustCompile(`<th scope="row" class="label">.*<a href="` + regexp.QuoteMeta(row) + `"`).MatchString(card) {
			t.Errorf("no row links to %s as the map does", row)
		}
	}

	card = anon.expect(http.MethodGet, base+"/cards/locations?"+shareWeek+"&source=Google", nil, http.StatusOK)
	gbGoogle := base + "?country=GB&amp;from=2026-05-01&amp;range=custom&amp;source=Google&amp;to=2026-05-07"
	usGoogle := base + "?country=US&amp;from=2026-05-01&amp;range=custom&amp;source=Google&amp;to=2026-05-07"
	if diff := cmp.Diff([][]string{{gbGoogle, "map-5", "GB", "2"}, {usGoogle, "map-1", "US", "1"}}, countries(card)); diff != "" {
		t.Errorf("the shared map's countries from Google (-want +got):\n%s", diff)
	}
}
