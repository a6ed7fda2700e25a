package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// spikeRecipientRow is an address's row of the settings page.
var spikeRecipientRow = regexp.MustCompile(`<tr data-spike-recipient="([^"]+)">\s*<th scope="row" class="label">([^<]+)</th>`)

// The Traffic spike notifications section of the Settings page, on a
// server that sends no email (it says so): an owner turns the notification
// on, changes its threshold, adds and removes addresses and turns it off;
// a bad threshold, a bad address, an address before a threshold and an
// 11th address are the form again with the message (the field marked,
// what was typed kept); an admin may change it; a viewer sees no section
// and is refused every form.
func TestSpikeNotificationSettingsForm(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	viewerKey(t, h) // viewer@example.com, a viewer of the site
	if _, err := h.app.Accounts.CreateUser(ctx, accounts.NewUser{Email: "admin@example.com", Password: password, Name: "Admin"}); err != nil {
		t.Fatal(err)
	}
	if err := h.app.Accounts.AddMember(ctx, h.siteID, "admin@example.com", model.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	site := "/sites/" + string(h.siteID)
	owner := newWebUser(t, h)
	owner.login(h.email)
	section := func(body string) string {
		t.Helper()
		i := strings.Index(body, `id="spike-notifications"`)
		if i < 0 {
			t.Fatalf("no Traffic spike notifications section:\n%.2000s", body)
		}
		return body[i : i+strings.Index(body[i:], "</section>")]
	}
	page := func() string {
		t.Helper()
		return section(owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK))
	}
	if s := page(); !strings.Contains(s, "data-spikes-off") || !strings.Contains(s, "Off.") || strings.Contains(s, "spike-email") {
		t.Fatalf("the section of a site without a notification, on a server without mail:\n%s", s)
	}
	post := func(u *webUser, path string, form url.Values) (int, string, string) {
		t.Helper()
		if form == nil {
			form = url.Values{}
		}
		form.Set("csrf", u.csrf)
		return u.do(http.MethodPost, site+path, form)
	}
	// the form without its CSRF token changes nothing
	owner.expect(http.MethodPost, site+"/spike-notification", url.Values{"threshold": {"5"}}, http.StatusForbidden)

	// an address before a threshold
	if status, _, body := post(owner, "/spike-notification/recipients", url.Values{"email": {"a@spikes.example"}}); status != http.StatusBadRequest ||
		!strings.Contains(section(body), "Set a threshold first, then the addresses it notifies.") {
		t.Errorf("an address before a threshold: %d", status)
	}
	// thresholds that are not whole numbers from 1 to 1,000,000
	for _, bad := range []string{"0", "-3", "2.5", "ten", "1000001", "", "99999999999999999999"} {
		status, _, body := post(owner, "/spike-notification", url.Values{"threshold": {bad}})
		s := section(body)
		if status != http.StatusBadRequest || !strings.Contains(s, "The threshold must be a whole number of visitors from 1 to 1,000,000.") ||
			!strings.Contains(s, `value="`+bad+`" aria-invalid="true" aria-describedby="spike-error"`) {
			t.Errorf("threshold %q: %d, or the field is not marked:\n%s", bad, status, s)
		}
	}
	if _, err := h.app.PG.SpikeNotification(ctx, h.siteID); !errors.Is(err, errs.ErrNotFound) {
		t.Fatalf("after refused thresholds the site has a notification: %v", err)
	}

	if status, loc, _ := post(owner, "/spike-notification", url.Values{"threshold": {" 25 "}}); status != http.StatusSeeOther ||
		loc != site+"/settings?spike=1#spike-notifications" {
		t.Fatalf("turning on: %d to %q", status, loc)
	}
	if s := page(); !strings.Contains(s, `data-spike-threshold="25"`) || !strings.Contains(s, "No addresses yet") {
		t.Fatalf("after turning on:\n%s", s)
	}
	rows := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, m := range spikeRecipientRow.FindAllStringSubmatch(page(), -1) {
			out[m[2]] = m[1]
		}
		return out
	}
	add := func(email string) (int, string, string) {
		t.Helper()
		return post(owner, "/spike-notification/recipients", url.Values{"email": {email}})
	}
	if status, loc, _ := add(" Reader@Spikes.example "); status != http.StatusSeeOther || loc != site+"/settings?spike_recipient=1#spike-notifications" {
		t.Fatalf("adding an address: %d to %q", status, loc)
	}
	add("reader@spikes.example") // listed already: left as it is
	if got := rows(); len(got) != 1 || got["reader@spikes.example"] == "" {
		t.Fatalf("after adding: %v, want reader@spikes.example once (lower-cased)", got)
	}
	status, _, body := add("not-an-address")
	if s := section(body); status != http.StatusBadRequest || !strings.Contains(s, "The email must be an address such as name@example.com.") ||
		!strings.Contains(s, `value="not-an-address" aria-invalid="true" aria-describedby="spike-error"`) {
		t.Errorf("a bad address: %d, or the field is not marked:\n%s", status, s)
	}
	for i := 2; i <= 10; i++ {
		if status, _, _ := add(fmt.Sprintf("reader%d@spikes.example", i)); status != http.StatusSeeOther {
			t.Fatalf("address %d: %d", i, status)
		}
	}
	if status, _, body := add("eleventh@spikes.example"); status != http.StatusBadRequest ||
		!strings.Contains(section(body), "A site&#39;s spike notification goes to at most 10 addresses; remove one first.") {
		t.Errorf("an 11th address: %d", status)
	}
	if got := rows(); len(got) != 10 || got["eleventh@spikes.example"] != "" {
		t.Fatalf("%d addresses listed, want 10 without the 11th", len(got))
	}
	// a new threshold keeps the addresses
	post(owner, "/spike-notification", url.Values{"threshold": {"30"}})
	if s := page(); !strings.Contains(s, `data-spike-threshold="30"`) || len(rows()) != 10 {
		t.Fatalf("after changing the threshold:\n%s", s)
	}
	id := rows()["reader@spikes.example"]

	// a viewer: no section, every form refused
	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if body := viewer.expect(http.MethodGet, site+"/settings", nil, http.StatusOK); strings.Contains(body, `id="spike-notifications"`) ||
		strings.Contains(body, "spikes.example") {
		t.Error("a viewer's settings page shows the spike notification")
	}
	for path, form := range map[string]url.Values{
		"/spike-notification":                              {"threshold": {"1"}},
		"/spike-notification/recipients":                   {"email": {"mine@spikes.example"}},
		"/spike-notification/recipients/" + id + "/delete": nil,
		"/spike-notification/delete":                       nil,
	} {
		// the settings page again, not the expired form's refusal
		if status, _, body := post(viewer, path, form); status != http.StatusForbidden || strings.Contains(body, "the form has expired") ||
			!strings.Contains(body, "<title>Settings · example.com") {
			t.Errorf("a viewer's POST %s: %d, want 403 for the role:\n%.2000s", path, status, body)
		}
	}
	n, err := h.app.PG.SpikeNotification(ctx, h.siteID)
	if err != nil || n.Threshold != 30 || len(n.Recipients) != 10 {
		t.Fatalf("after the viewer's forms: threshold %d, %d addresses, %v", n.Threshold, len(n.Recipients), err)
	}
	// an admin may
	admin := newWebUser(t, h)
	admin.login("admin@example.com")
	if s := section(admin.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)); !strings.Contains(s, `data-spike-threshold="30"`) {
		t.Errorf("an admin's section:\n%s", s)
	}
	if status, _, _ := post(admin, "/spike-notification", url.Values{"threshold": {"40"}}); status != http.StatusSeeOther {
		t.Errorf("an admin's threshold: %d", status)
	}

	if _, loc, _ := post(owner, "/spike-notification/recipients/"+id+"/delete", nil); loc != site+"/settings?spike_recipient_removed=1#spike-notifications" {
		t.Fatalf("removing went to %q", loc)
	}
	if got := rows(); len(got) != 9 || got["reader@spikes.example"] != "" {
		t.Fatalf("after removing: %v", got)
	}
	if status, _, _ := post(owner, "/spike-notification/recipients/"+id+"/delete", nil); status != http.StatusNotFound {
		t.Errorf("removing again: %d, want 404", status)
	}
	if _, loc, _ := post(owner, "/spike-notification/delete", nil); loc != site+"/settings?spike_off=1#spike-notifications" {
		t.Fatalf("turning off went to %q", loc)
	}
	if s := page(); !strings.Contains(s, "Off.") || strings.Contains(s, "spikes.example") {
		t.Fatalf("after turning off:\n%s", s)
	}
	db, err := pgx.Connect(ctx, h.cfg.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	var left int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM spike_recipients").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d addresses left after turning off (%v)", left, err)
	}
}
