package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/pkg/api"
	"github.com/tally-analytics/tally/pkg/client"
)

// The dashboard's funnels: the editor in the settings (create, edit,
// delete, refusals), the card with its picker, and the download.
func TestDashboardFunnels(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	loadFunnelDataset(t, h)
	// logins last 14 days of the clock, and a new login deletes those that
	// Postgres's own clock sees expired
	h.clock.Set(time.Now().UTC())
	site := "/sites/" + string(h.siteID)
	w := newWebUser(t, h)
	w.login(h.email)

	// the card before any funnel: a link to the settings
	view := "?range=custom&from=2026-06-10&to=2026-06-11"
	if body := w.expect(http.MethodGet, site+"/cards/funnels"+view, nil, http.StatusOK); !strings.Contains(body, "No funnels yet") {
		t.Errorf("card without funnels:\n%.500s", body)
	}
	w.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	form := url.Values{"csrf": {w.csrf}, "name": {"Pricing to checkout"}, "window_minutes": {"60"},
		"step_type_0": {"pageview"}, "step_target_0": {"/pricing"},
		"step_type_1": {"pageview"}, "step_target_1": {"/signup/*"},
		"step_type_2": {"custom_event"}, "step_target_2": {"Signup"}, "step_props_2": {"plan=pro"},
		"step_type_3": {"custom_event"}, "step_target_3": {"Checkout"},
		"step_type_4": {"pageview"}, "step_target_4": {""}}
	status, loc, _ := w.do(http.MethodPost, site+"/funnels", form)
	if status != http.StatusSeeOther || !strings.Contains(loc, "funnel=1") {
		t.Fatalf("creating a funnel: %d to %q", status, loc)
	}
	list, err := h.client(h.key).Funnels(ctx, string(h.siteID))
	if err != nil || len(list) != 1 {
		t.Fatalf("funnels after the form: %+v, %v", list, err)
	}
	f := list[0]
	wantSteps := []api.FunnelStep{{Type: "pageview", PagePath: "/pricing"}, {Type: "pageview", PagePath: "/signup/*"},
		{Type: "custom_event", EventName: "Signup", Props: map[string]string{"plan": "pro"}}, {Type: "custom_event", EventName: "Checkout"}}
	if diff := cmp.Diff(wantSteps, f.Steps); f.Name != "Pricing to checkout" || f.WindowSeconds != 3600 || diff != "" {
		t.Errorf("the form's funnel: %+v (steps -want +got):\n%s", f, diff)
	}
	// a refused form says which step is wrong
	bad := with(form, "step_target_1", "signup")
	bad.Set("csrf", w.csrf)
	if body := w.expect(http.MethodPost, site+"/funnels", bad, http.StatusBadRequest); !strings.Contains(body, "Step 2: must start with /") {
		t.Errorf("refused funnel form:\n%.2000s", body)
	}
	if body := w.expect(http.MethodGet, site+"/settings", nil, http.StatusOK); !strings.Contains(body, `data-funnel="Pricing to checkout"`) ||
		!strings.Contains(body, "<code>Signup (plan=pro)</code>") {
		t.Errorf("settings without the funnel:\n%.3000s", body)
	}

	// the card: the numbers of TestFunnelReport
	card := w.expect(http.MethodGet, site+"/cards/funnels"+view, nil, http.StatusOK)
	for _, want := range []string{`data-col="visitors" data-value="9"`, `data-col="visitors" data-value="2"`,
		`data-col="revenue" data-value="7200"`, `data-col="dropoff" data-value="4"`, "10m 00s", `data-value="22.2"`} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %s:\n%.4000s", want, card)
		}
	}
	if strings.Contains(card, `data-metric="sampled"`) {
		t.Error("the card of a funnel read whole says it is sampled")
	}
	// the page's script starts the funnel card first, beside the top ones
	dash := w.expect(http.MethodGet, site+view, nil, http.StatusOK)
	if !regexp.MustCompile(`data-card="[^"]*/cards/funnels[^"]*" data-first`).MatchString(dash) ||
		strings.Count(dash, "data-first") != 1 {
		t.Errorf("the funnel card is not the one marked to start first:\n%.6000s", dash)
	}
	// a second funnel: the picker shows both, the view's funnel chosen
	second, err := h.client(h.key).CreateFunnel(ctx, api.FunnelRequest{SiteID: string(h.siteID), Name: "Blog", Steps: twoSteps})
	if err != nil {
		t.Fatal(err)
	}
	card = w.expect(http.MethodGet, site+"/cards/funnels"+view+"&funnel="+second.FunnelID, nil, http.StatusOK)
	if !strings.Contains(card, "funnel="+f.FunnelID) || !strings.Contains(card, `aria-current="true" class="active">Blog</a>`) {
		t.Errorf("picker:\n%.2000s", card)
	}
	// a page filter: the card says why it shows nothing
	if card := w.expect(http.MethodGet, site+"/cards/funnels"+view+"&pathname=/pricing", nil, http.StatusOK); !strings.Contains(card, "cannot be filtered by page") {
		t.Errorf("card under a page filter:\n%.1000s", card)
	}

	// the download of a view with a funnel holds its CSV, the API's
	res, body := webGet(t, w, site+"/download"+view+"&funnel="+f.FunnelID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("download: %d %.300s", res.StatusCode, body)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var apiCSV strings.Builder
	if _, err := h.client(h.key).CSV(ctx, "funnel", client.StatsParams{SiteID: string(h.siteID), FunnelID: f.FunnelID,
		DateFrom: "2026-06-10", DateTo: "2026-06-11"}, &apiCSV); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, zf := range zr.File {
		if zf.Name != "funnel.csv" {
			continue
		}
		found = true
		rc, _ := zf.Open()
		got, _ := io.ReadAll(rc)
		rc.Close()
		if string(got) != apiCSV.String() {
			t.Errorf("funnel.csv of the download:\n%s\nthe API's:\n%s", got, apiCSV.String())
		}
	}
	if !found {
		t.Error("the download of a view with a funnel has no funnel.csv")
	}
	res, body = webGet(t, w, site+"/download"+view)
	if zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body))); err != nil || res.StatusCode != 200 {
		t.Fatalf("download without a funnel: %d %v", res.StatusCode, err)
	} else {
		for _, zf := range zr.File {
			if zf.Name == "funnel.csv" {
				t.Error("a download without a chosen funnel holds funnel.csv")
			}
		}
	}

	// the editor: the form filled, a refusal kept as sent, a change saved
	edit := site + "/funnels/" + f.FunnelID
	page := w.expect(http.MethodGet, edit, nil, http.StatusOK)
	if !strings.Contains(page, `value="plan=pro"`) || !strings.Contains(page, `value="60"`) {
		t.Errorf("editor:\n%.4000s", page)
	}
	upd := with(form, "name", "Renamed", "step_target_3", "")
	upd.Set("csrf", w.csrf)
	upd.Set("window_minutes", "0")
	if page := w.expect(http.MethodPost, edit, upd, http.StatusBadRequest); !strings.Contains(page, "Window: ") || !strings.Contains(page, `value="Renamed"`) {
		t.Errorf("refused edit:\n%.3000s", page)
	}
	// minutes whose seconds would wrap round into an hour are refused too
	upd.Set("window_minutes", "4611686018427387964")
	w.expect(http.MethodPost, edit, upd, http.StatusBadRequest)
	upd.Set("window_minutes", "120")
	w.expect(http.MethodPost, edit, upd, http.StatusSeeOther)
	if got, err := h.client(h.key).Funnel(ctx, f.FunnelID); err != nil || got.Name != "Renamed" || len(got.Steps) != 3 || got.WindowSeconds != 7200 {
		t.Errorf("after the edit: %+v, %v", got, err)
	}

	w.expect(http.MethodGet, "/sites/nosuchsite/funnels/"+f.FunnelID, nil, http.StatusNotFound)
	// a viewer sees the card, changes nothing; another site's funnel is not found
	other := newWebUser(t, h)
	viewerKey(t, h) // makes viewer@example.com a viewer of the site
	other.login("viewer@example.com")
	other.expect(http.MethodGet, site+"/cards/funnels"+view, nil, http.StatusOK)
	other.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	other.expect(http.MethodPost, site+"/funnels", with(form, "csrf", other.csrf), http.StatusForbidden)
	other.expect(http.MethodPost, edit+"/delete", url.Values{"csrf": {other.csrf}}, http.StatusForbidden)

	w.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	w.expect(http.MethodPost, edit+"/delete", url.Values{"csrf": {w.csrf}}, http.StatusSeeOther)
	if list, _ := h.client(h.key).Funnels(ctx, string(h.siteID)); len(list) != 1 || list[0].FunnelID != second.FunnelID {
		t.Errorf("after the delete: %+v", list)
	}
}
