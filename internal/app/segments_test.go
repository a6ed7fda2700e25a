package app_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// segmentUser is an account with a key of every scope and, unless role is
// empty, that role on site.
func segmentUser(t *testing.T, h *harness, email string, role model.Role, scopes ...model.Scope) *client.Client {
	t.Helper()
	ctx := context.Background()
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: email, Password: password, Name: "S"}); err != nil {
		t.Fatal(err)
	}
	if role != "" {
		if err := h.app.Accounts.AddMember(ctx, h.siteID, email, role); err != nil {
			t.Fatal(err)
		}
	}
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: email, Name: "k", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return h.client(k.Secret)
}

// Segments by role: any member lists them (viewers included), owners and
// admins save, change and delete them, a viewer is 403 and another account
// 404 as for a site that does not exist; a segment of another site, an id
// that is no UUID and an unknown one are segment_not_found.
func TestSegmentsByRole(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	owner := h.client(h.key)
	admin := segmentUser(t, h, "admin@segments.example", model.RoleAdmin)
	viewer := segmentUser(t, h, "viewer@segments.example", model.RoleViewer)
	other := segmentUser(t, h, "other@segments.example", "")
	readOnly := segmentUser(t, h, "reader@segments.example", model.RoleAdmin, model.ScopeStatsRead)

	// the owner saves one; its filters come back as the stats API reads them
	pro, err := owner.CreateSegment(ctx, site, api.SegmentRequest{Name: "  Desktop on pro ",
		Filters: map[string]string{"device": "desktop", "props[plan]": "pro", "country": "gb"}})
	if err != nil {
		t.Fatal(err)
	}
	want := api.Segment{ID: pro.ID, SiteID: site, Name: "Desktop on pro", CreatedAt: pro.CreatedAt,
		Filters: map[string]string{"device": "Desktop", "props[plan]": "pro", "country": "GB"}}
	if diff := cmp.Diff(want, pro); diff != "" {
		t.Errorf("the saved segment (-want +got):\n%s", diff)
	}
	// an admin saves another; a viewer and a key without sites:manage may not
	mobile, err := admin.CreateSegment(ctx, site, api.SegmentRequest{Name: "Mobile", Filters: map[string]string{"device": "Mobile"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = viewer.CreateSegment(ctx, site, api.SegmentRequest{Name: "Viewer's", Filters: map[string]string{"device": "Mobile"}})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = readOnly.CreateSegment(ctx, site, api.SegmentRequest{Name: "Reader's", Filters: map[string]string{"device": "Mobile"}})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = other.CreateSegment(ctx, site, api.SegmentRequest{Name: "Intruder's", Filters: map[string]string{"device": "Mobile"}})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")

	// every member reads both, by name; a key with stats:read only too
	for name, c := range map[string]*client.Client{"owner": owner, "admin": admin, "viewer": viewer, "stats:read key": readOnly} {
		list, err := c.Segments(ctx, site)
		if err != nil {
			t.Fatalf("%s lists: %v", name, err)
		}
		if len(list) != 2 || list[0].Name != "Desktop on pro" || list[1].Name != "Mobile" {
			t.Errorf("%s lists %+v, want Desktop on pro then Mobile", name, list)
		}
	}
	_, err = other.Segments(ctx, site)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	_, err = owner.Segments(ctx, "nope")
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")

	// changes: an admin renames the owner's; a viewer and another account may not
	renamed := "Pro on desktops"
	got, err := admin.UpdateSegment(ctx, site, pro.ID, api.SegmentChange{Name: &renamed})
	if err != nil || got.Name != renamed || got.Filters["device"] != "Desktop" {
		t.Fatalf("renaming: %+v, %v", got, err)
	}
	got, err = owner.UpdateSegment(ctx, site, mobile.ID, api.SegmentChange{Filters: map[string]string{"device": "tablet"}})
	if err != nil || got.Name != "Mobile" || !cmp.Equal(got.Filters, map[string]string{"device": "Tablet"}) {
		t.Fatalf("new filters: %+v, %v", got, err)
	}
	_, err = viewer.UpdateSegment(ctx, site, pro.ID, api.SegmentChange{Name: &renamed})
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	_, err = other.UpdateSegment(ctx, site, pro.ID, api.SegmentChange{Name: &renamed})
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	err = viewer.DeleteSegment(ctx, site, pro.ID)
	wantError(t, err, http.StatusForbidden, "forbidden", "")
	err = other.DeleteSegment(ctx, site, pro.ID)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")

	// bad ids: none of them is found, under this site or another
	elsewhere, err := h.app.Accounts.CreateSite(ctx, accounts.NewSite{OwnerEmail: "other@segments.example", Domain: "elsewhere.example"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := other.CreateSegment(ctx, string(elsewhere.ID), api.SegmentRequest{Name: "Theirs", Filters: map[string]string{"os": "Linux"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"not-a-uuid", "00000000-0000-0000-0000-000000000000", theirs.ID} {
		err = owner.DeleteSegment(ctx, site, id)
		wantError(t, err, http.StatusNotFound, "segment_not_found", "")
		_, err = owner.UpdateSegment(ctx, site, id, api.SegmentChange{Name: &renamed})
		wantError(t, err, http.StatusNotFound, "segment_not_found", "")
	}
	err = owner.DeleteSegment(ctx, "nope", pro.ID)
	wantError(t, err, http.StatusNotFound, "site_not_found", "site_id")
	if list, err := other.Segments(ctx, string(elsewhere.ID)); err != nil || len(list) != 1 || list[0].Name != "Theirs" {
		t.Errorf("the other account's segments after the attempts: %+v, %v", list, err)
	}

	// deletions: an admin deletes one, the owner the other
	if err := admin.DeleteSegment(ctx, site, mobile.ID); err != nil {
		t.Fatal(err)
	}
	err = admin.DeleteSegment(ctx, site, mobile.ID)
	wantError(t, err, http.StatusNotFound, "segment_not_found", "")
	if err := owner.DeleteSegment(ctx, site, pro.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := viewer.Segments(ctx, site); err != nil || len(list) != 0 {
		t.Errorf("after deleting both: %+v, %v", list, err)
	}
}

// What a segment may be: a name of 1 to 64 characters (after trimming),
// unique in its site whatever its case (409); filters the stats API takes,
// refused with its own messages (400 naming filters.<parameter>); at most
// 50 a site (409).
func TestSegmentLimits(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	site := string(h.siteID)
	c := h.client(h.key)
	mobile := map[string]string{"device": "Mobile"}
	if _, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Phones", Filters: mobile}); err != nil {
		t.Fatal(err)
	}

	// names
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{strings.Repeat("é", 64), true}, // characters, not bytes (128 of them)
		{strings.Repeat("é", 65), false},
		{"   ", false},
		{"", false},
		{"tab\tin", false},
	} {
		_, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: tc.name, Filters: mobile})
		if tc.ok && err != nil {
			t.Errorf("name %q: %v", tc.name, err)
		}
		if !tc.ok {
			wantError(t, err, http.StatusBadRequest, "invalid_request", "name")
		}
	}
	_, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: " PHONES", Filters: map[string]string{"device": "Tablet"}})
	wantError(t, err, http.StatusConflict, "segment_exists", "name")
	tablets, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Tablets", Filters: map[string]string{"device": "Tablet"}})
	if err != nil {
		t.Fatal(err)
	}
	phones := "phones"
	_, err = c.UpdateSegment(ctx, site, tablets.ID, api.SegmentChange{Name: &phones})
	wantError(t, err, http.StatusConflict, "segment_exists", "name")

	// filters: the stats API's own refusals, with its messages
	statsMessage := func(param, value string) string {
		t.Helper()
		q := url.Values{"site_id": {site}, "date_from": {"2026-05-01"}, "date_to": {"2026-05-07"}}
		q.Set(param, value)
		status, e := get(t, h, h.key, "/api/v1/stats/overview", q)
		if status != http.StatusBadRequest || e.Error.Field != param {
			t.Fatalf("the stats API on %s=%s: %d %+v", param, value, status, e.Error)
		}
		return e.Error.Message
	}
	for _, tc := range []struct {
		filters map[string]string
		field   string
		stats   [2]string // the same filter given to the stats API, whose message is the segment's
	}{
		{map[string]string{"country": "Germany"}, "filters.country", [2]string{"country", "Germany"}},
		{map[string]string{"device": "Phone"}, "filters.device", [2]string{"device", "Phone"}},
		{map[string]string{"pathname": "pricing"}, "filters.pathname", [2]string{"pathname", "pricing"}},
		{map[string]string{"source": ""}, "filters.source", [2]string{"source", ""}},
		{map[string]string{"props[plan]": strings.Repeat("v", 2001)}, "filters.props[plan]", [2]string{"props[plan]", strings.Repeat("v", 2001)}},
		{map[string]string{"props[]": "x"}, "filters.props[]", [2]string{"props[]", "x"}},
		{map[string]string{"date_from": "2026-05-01"}, "filters.date_from", [2]string{}},
		{map[string]string{"segment": tablets.ID}, "filters.segment", [2]string{}},
		{map[string]string{"props[a]": "1", "props[b]": "2", "props[c]": "3", "props[d]": "4"}, "filters.props", [2]string{}},
		{map[string]string{}, "filters", [2]string{}},
		{nil, "filters", [2]string{}},
	} {
		_, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Bad", Filters: tc.filters})
		wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		if tc.stats[0] != "" {
			if got, want := apiError(t, err).Message, statsMessage(tc.stats[0], tc.stats[1]); got != want {
				t.Errorf("%s: the segment's message %q, the stats API's %q", tc.field, got, want)
			}
		}
		_, err = c.UpdateSegment(ctx, site, tablets.ID, api.SegmentChange{Filters: tc.filters})
		if tc.filters != nil { // a change without filters keeps them
			wantError(t, err, http.StatusBadRequest, "invalid_request", tc.field)
		}
	}
	// nothing of the refused changes was kept
	list, err := c.Segments(ctx, site)
	if err != nil || len(list) != 3 {
		t.Fatalf("after the refusals: %+v, %v", list, err)
	}
	for _, sg := range list {
		if sg.ID == tablets.ID && (sg.Name != "Tablets" || !cmp.Equal(sg.Filters, map[string]string{"device": "Tablet"})) {
			t.Errorf("Tablets after the refused changes: %+v", sg)
		}
	}

	// 50 a site: Phones, the 64 é and Tablets, then 47 more; the 51st is refused
	for i := 4; i <= 50; i++ {
		if _, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Segment " + itoa(i), Filters: mobile}); err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	_, err = c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Segment 51", Filters: mobile})
	wantError(t, err, http.StatusConflict, "too_many_segments", "")
	if list, err := c.Segments(ctx, site); err != nil || len(list) != 50 {
		t.Fatalf("a site at its limit lists %d segments, %v; want 50", len(list), err)
	}
	// one deleted, one fits again
	if err := c.DeleteSegment(ctx, site, tablets.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateSegment(ctx, site, api.SegmentRequest{Name: "Segment 51", Filters: mobile}); err != nil {
		t.Errorf("after a deletion: %v", err)
	}
}
