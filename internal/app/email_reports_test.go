package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/model"
)

// recipientRow is a recipient's row of the settings page: its id and
// which reports it gets.
var recipientRow = regexp.MustCompile(`<tr data-recipient="([^"]+)">\s*<th scope="row" class="label">([^<]+)</th>\s*<td data-reports="([^"]*)">`)

// The Email reports section of the Settings page: an owner adds an address
// with its reports, changes them, removes it; a bad address, no report
// ticked and an 11th address are the form again with the message (the
// field marked); a viewer sees no section and is refused the forms.
func TestEmailReportSettingsForm(t *testing.T) {
	h := newHarness(t)
	viewerKey(t, h) // viewer@example.com, a viewer of the site
	site := "/sites/" + string(h.siteID)
	owner := newWebUser(t, h)
	owner.login(h.email)
	body := owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK)
	if !strings.Contains(body, `id="email-reports"`) || !strings.Contains(body, "No email reports yet.") ||
		!strings.Contains(body, "data-reports-off") {
		t.Fatal("the owner's settings page has no Email reports section saying this server sends no email")
	}
	// the form without its CSRF token changes nothing
	owner.expect(http.MethodPost, site+"/email-reports", url.Values{"email": {"forged@reports.example"}, "weekly": {"on"}}, http.StatusForbidden)

	rows := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, m := range recipientRow.FindAllStringSubmatch(owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK), -1) {
			out[m[2]] = m[3]
		}
		return out
	}
	add := func(email string, reports ...string) (int, string, string) {
		t.Helper()
		form := url.Values{"email": {email}, "csrf": {owner.csrf}}
		for _, r := range reports {
			form.Set(r, "on")
		}
		return owner.do(http.MethodPost, site+"/email-reports", form)
	}
	if status, loc, _ := add(" Reader@Reports.example ", "weekly"); status != http.StatusSeeOther ||
		loc != site+"/settings?report_recipient=1#email-reports" {
		t.Fatalf("adding an address: %d to %q", status, loc)
	}
	if got := rows(); len(got) != 1 || got["reader@reports.example"] != "weekly" {
		t.Fatalf("after adding: %v, want reader@reports.example weekly (lower-cased)", got)
	}
	add("reader@reports.example", "weekly", "monthly") // the same address: its reports change
	if got := rows(); len(got) != 1 || got["reader@reports.example"] != "weekly,monthly" {
		t.Fatalf("after changing: %v, want reader@reports.example weekly,monthly", got)
	}

	// refused: the message, the field marked, what was typed kept
	status, _, body := add("not-an-address", "monthly")
	if status != http.StatusBadRequest || !strings.Contains(body, "The email must be an address") ||
		!regexp.MustCompile(`id="report-email"[^>]*value="not-an-address" aria-invalid="true" aria-describedby="report-error"`).MatchString(body) {
		t.Errorf("a bad address: %d, or the email field is not marked:\n%.3000s", status, body[strings.Index(body, `id="email-reports"`):])
	}
	if status, _, body := add("other@reports.example"); status != http.StatusBadRequest || !strings.Contains(body, "Choose weekly, monthly or both.") {
		t.Errorf("no report ticked: %d", status)
	}
	for i := 2; i <= 10; i++ {
		if status, _, _ := add(fmt.Sprintf("reader%d@reports.example", i), "weekly"); status != http.StatusSeeOther {
			t.Fatalf("address %d: %d", i, status)
		}
	}
	if status, _, body := add("eleventh@reports.example", "weekly"); status != http.StatusBadRequest ||
		!strings.Contains(body, "at most 10 addresses") {
		t.Errorf("an 11th address: %d", status)
	}
	if got := rows(); len(got) != 10 || got["eleventh@reports.example"] != "" {
		t.Fatalf("%d addresses listed, want 10 without the 11th", len(got))
	}
	stored, err := h.app.PG.ReportRecipients(context.Background(), h.siteID)
	if err != nil || len(stored) != 10 {
		t.Fatalf("stored %d recipients, %v", len(stored), err)
	}
	id := recipientRow.FindStringSubmatch(owner.expect(http.MethodGet, site+"/settings", nil, http.StatusOK))[1]

	viewer := newWebUser(t, h)
	viewer.login("viewer@example.com")
	if body := viewer.expect(http.MethodGet, site+"/settings", nil, http.StatusOK); strings.Contains(body, `id="email-reports"`) ||
		strings.Contains(body, "reports.example") {
		t.Error("a viewer's settings page shows the email reports")
	}
	viewer.expect(http.MethodPost, site+"/email-reports", url.Values{"email": {"mine@reports.example"}, "weekly": {"on"}, "csrf": {viewer.csrf}},
		http.StatusForbidden)
	viewer.expect(http.MethodPost, site+"/email-reports/"+id+"/delete", url.Values{"csrf": {viewer.csrf}}, http.StatusForbidden)
	if got := rows(); len(got) != 10 {
		t.Fatalf("after the viewer's forms: %d addresses", len(got))
	}

	_, loc, _ := owner.do(http.MethodPost, site+"/email-reports/"+id+"/delete", url.Values{"csrf": {owner.csrf}})
	if loc != site+"/settings?report_recipient_removed=1#email-reports" {
		t.Fatalf("removing went to %q", loc)
	}
	if got := rows(); len(got) != 9 {
		t.Fatalf("after removing: %d addresses, want 9", len(got))
	}
	owner.expect(http.MethodPost, site+"/email-reports/"+id+"/delete", url.Values{"csrf": {owner.csrf}}, http.StatusNotFound)
	// the service refuses what the form would: a frequency-less input
	if _, err := h.app.Reports.SetRecipient(context.Background(), ownerPrincipal(h), h.siteID, emailreports.Input{Email: "x@reports.example"}); err == nil {
		t.Error("a recipient without reports was saved")
	}
}

// ownerPrincipal is the harness's owner as their dashboard login acts.
func ownerPrincipal(h *harness) auth.Principal {
	return auth.Principal{UserID: h.userID, Scopes: model.AllScopes}
}
