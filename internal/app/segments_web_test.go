package app_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
)

// The dashboard's segments: every member sees the picker, whose links put
// a segment's filters in the URL in place of the view's (the range and the
// rest kept) and mark the segment the view is; owners and admins save the
// view's filters and delete segments, a viewer sees no form and is refused
// the posts; a shared dashboard has no segments at all.
func TestSegmentsOnTheDashboard(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	segmentUser(t, h, "viewer@segments.example", model.RoleViewer)
	phones, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Phones", Filters: map[string]string{"device": "Mobile"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Pro in Britain",
		Filters: map[string]string{"country": "GB", "props[plan]": "pro"}}); err != nil {
		t.Fatal(err)
	}
	dashboard := "/sites/" + site

	// a viewer: the picker, with links that replace the view's filters
	viewer := newWebUser(t, h)
	viewer.login("viewer@segments.example")
	body := html.UnescapeString(viewer.expect(http.MethodGet, dashboard+"?range=30d&source=Google&compare=1", nil, http.StatusOK))
	apply := func(q url.Values) string { return `href="` + dashboard + "?" + q.Encode() + `"` }
	for _, want := range []string{
		apply(url.Values{"range": {"30d"}, "compare": {"1"}, "device": {"Mobile"}}) + ` aria-describedby="segment-` + phones.ID + `">Phones</a>`,
		`>Device: Mobile</span>`,
		apply(url.Values{"range": {"30d"}, "compare": {"1"}, "country": {"GB"}, "props[plan]": {"pro"}}),
		`>Country: GB, plan: pro</span>`,
		`Segments (2)</summary>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the viewer's dashboard lacks %s:\n%s", want, section(body, "segments"))
		}
	}
	if strings.Contains(body, "save-segment") || strings.Contains(body, "Delete the segment") {
		t.Error("a viewer is offered to save or delete segments")
	}
	// the view that is a segment marks it
	body = viewer.expect(http.MethodGet, dashboard+"?range=7d&device=mobile", nil, http.StatusOK)
	if !strings.Contains(body, `aria-current="true" aria-describedby="segment-`+phones.ID+`">Phones</a>`) ||
		!strings.Contains(body, "<strong>Phones</strong> applied</summary>") {
		t.Errorf("the view of Phones' filters does not mark it:\n%s", section(body, "segments"))
	}
	status, _, _ := viewer.do(http.MethodPost, dashboard+"/segments?range=7d&device=Mobile", url.Values{"name": {"Mine"}, "csrf": {viewer.csrf}})
	if status != http.StatusForbidden {
		t.Errorf("a viewer saving a segment: %d, want 403", status)
	}
	status, _, _ = viewer.do(http.MethodPost, dashboard+"/segments/"+phones.ID+"/delete?range=7d", url.Values{"csrf": {viewer.csrf}})
	if status != http.StatusForbidden {
		t.Errorf("a viewer deleting a segment: %d, want 403", status)
	}

	// the owner: the form only when the view has filters
	owner := newWebUser(t, h)
	owner.login(h.email)
	if body := owner.expect(http.MethodGet, dashboard+"?range=7d", nil, http.StatusOK); strings.Contains(body, "save-segment") {
		t.Error("the form to save filters shows without filters")
	}
	body = owner.expect(http.MethodGet, dashboard+"?range=7d&browser=Firefox&os=Linux", nil, http.StatusOK)
	if !strings.Contains(body, `action="`+dashboard+`/segments?browser=Firefox&amp;os=Linux&amp;range=7d"`) {
		t.Fatalf("the owner's form to save the view's filters:\n%s", section(body, "segments"))
	}
	status, loc, _ := owner.do(http.MethodPost, dashboard+"/segments?browser=Firefox&os=Linux&range=7d", url.Values{"name": {"Firefox on Linux"}, "csrf": {owner.csrf}})
	if status != http.StatusSeeOther || loc != dashboard+"?browser=Firefox&os=Linux&range=7d&notice=segment_saved" {
		t.Fatalf("saving: %d to %q", status, loc)
	}
	body = owner.expect(http.MethodGet, loc, nil, http.StatusOK)
	if !strings.Contains(body, "Segment saved") || !strings.Contains(body, "<strong>Firefox on Linux</strong> applied") {
		t.Errorf("after saving:\n%s", section(body, "segments"))
	}
	list, err := c.Segments(ctx, site)
	if err != nil || len(list) != 3 || list[0].Name != "Firefox on Linux" || list[0].Filters["browser"] != "Firefox" ||
		list[0].Filters["os"] != "Linux" || len(list[0].Filters) != 2 {
		t.Fatalf("the segments after saving: %+v, %v", list, err)
	}
	// refused: the form again with the name typed and the reason, 409
	status, _, body = owner.do(http.MethodPost, dashboard+"/segments?browser=Firefox&range=7d", url.Values{"name": {"PHONES"}, "csrf": {owner.csrf}})
	if status != http.StatusConflict || !strings.Contains(body, `value="PHONES" aria-invalid="true"`) ||
		!strings.Contains(body, "already has a segment named") {
		t.Errorf("a taken name: %d\n%s", status, section(body, "segments"))
	}
	// deleting comes back to the view
	status, loc, _ = owner.do(http.MethodPost, dashboard+"/segments/"+list[0].ID+"/delete?range=7d&browser=Firefox", url.Values{"csrf": {owner.csrf}})
	if status != http.StatusSeeOther || loc != dashboard+"?browser=Firefox&range=7d&notice=segment_deleted" {
		t.Errorf("deleting: %d to %q", status, loc)
	}
	if list, err := c.Segments(ctx, site); err != nil || len(list) != 2 {
		t.Errorf("after deleting: %+v, %v", list, err)
	}

	// a shared dashboard has none of it
	link, err := c.CreateSharedLink(ctx, site, api.SharedLinkRequest{Label: "segments"})
	if err != nil {
		t.Fatal(err)
	}
	anon := newWebUser(t, h)
	if body := anon.expect(http.MethodGet, "/share/"+link.Token+"?range=7d&device=Mobile", nil, http.StatusOK); strings.Contains(body, "egment") {
		t.Errorf("the shared dashboard mentions segments:\n%s", body)
	}
}

// section is the part of a page from the element of class name on, for
// failure messages.
func section(body, class string) string {
	if i := strings.Index(body, `class="`+class); i >= 0 {
		return body[i:min(len(body), i+2000)]
	}
	return body
}
