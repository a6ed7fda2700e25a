package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/testenv"
)

// secondSecrets are another secret per provider, of the provider's form.
var secondSecrets = map[string]string{
	"provider_a": "whsec_stripe_test_endpoint_fedcba9876543210",
	"provider_b": "lemon-squeezy-signing-secret-2",
	"provider_c": "pdl_ntfset_01hv8y_rotatedsecret",
	"provider_d": "whsec_" + base64.StdEncoding.EncodeToString([]byte("polar-rotated-webhooks-key!!")),
}

// wrongSecrets are secrets of each provider's form that the site does not hold.
var wrongSecrets = map[string]string{
	"provider_a": "whsec_someone_elses_0000000000000000",
	"provider_b": "lemon-squeezy-someone-elses",
	"provider_c": "pdl_ntfset_01hv8z_someoneelses",
	"provider_d": "whsec_" + base64.StdEncoding.EncodeToString([]byte("someone else's polar key")),
}

// A site holding two secrets for a provider accepts a delivery signed with
// either of them and refuses one signed with neither (401, nothing
// recorded); the server's log never holds a secret.
func TestWebhookSecretsEitherOfTwo(t *testing.T) {
	var logged lockedBuffer
	out := []io.Writer{&logged}
	if run := testenv.RunLog(); run != nil {
		out = append(out, run)
	}
	h := newHarnessLogged(t, testenv.Config(t), slog.New(slog.NewTextHandler(io.MultiWriter(out...), &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx := context.Background()
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	site := string(h.siteID)
	for _, p := range []string{"provider_a", "provider_b", "provider_c", "provider_d"} {
		n, err := h.app.Accounts.SetProviderSecrets(ctx, h.siteID, model.Provider(p), []string{webhookSecrets[p], secondSecrets[p]}, false)
		if err != nil || n != 2 {
			t.Fatalf("%s: SetProviderSecrets = %d, %v", p, n, err)
		}
		body := fixture(t, p, webhookFixtures[p][0].file)
		if status, res := postWebhook(t, h, p, site, body, webhookSigners[p](wrongSecrets[p], body, h.clock.Now())); status != http.StatusUnauthorized || res.Received {
			t.Errorf("%s signed with neither secret: %d %+v, want 401", p, status, res)
		}
		if n := ledgerCount(t, h, site, "provider = $2", p); n != 0 {
			t.Errorf("%s: a refused delivery recorded %d rows", p, n)
		}
		for i, secret := range []string{secondSecrets[p], webhookSecrets[p]} {
			if status, res := postWebhook(t, h, p, site, body, webhookSigners[p](secret, body, h.clock.Now())); status != http.StatusOK || !res.Received {
				t.Errorf("%s signed with secret %d: %d %+v, want 200", p, i+1, status, res)
			}
		}
		if n := ledgerCount(t, h, site, "provider = $2", p); n != 1 {
			t.Errorf("%s: %d rows for one payment delivered twice, want 1", p, n)
		}
	}
	for p := range webhookSecrets {
		for _, s := range []string{webhookSecrets[p], secondSecrets[p], wrongSecrets[p]} {
			if strings.Contains(logged.String(), s) {
				t.Errorf("the log holds a %s secret", p)
			}
		}
	}
}

// The reason a site holds a second Stripe secret: its test endpoint's. A
// test-mode event signed with it is acknowledged and ignored, not refused
// and retried for days.
func TestWebhookStripeTestEndpointSecret(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.clock.Set(time.Now().UTC().Truncate(time.Second))
	live, test := webhookSecrets["provider_a"], secondSecrets["provider_a"]
	if err := h.app.Accounts.SetProviderSecret(ctx, h.siteID, model.ProviderA, live); err != nil {
		t.Fatal(err)
	}
	body := bytes.ReplaceAll(fixture(t, "provider_a", "checkout.session.completed.json"), []byte(`"livemode": true`), []byte(`"livemode": false`))
	if status, _ := postWebhook(t, h, "provider_a", string(h.siteID), body, webhookSigners["provider_a"](test, body, h.clock.Now())); status != http.StatusUnauthorized {
		t.Errorf("test-mode event, the live secret alone set: %d, want 401", status)
	}
	if n, err := h.app.Accounts.SetProviderSecrets(ctx, h.siteID, model.ProviderA, []string{test}, true); err != nil || n != 2 {
		t.Fatalf("adding the test endpoint's secret: %d, %v", n, err)
	}
	status, res := postWebhook(t, h, "provider_a", string(h.siteID), body, webhookSigners["provider_a"](test, body, h.clock.Now()))
	if status != http.StatusOK || !res.Ignored || res.Reason != "test mode: not counted as revenue" {
		t.Errorf("test-mode event with both secrets set: %d %+v, want 200 ignored as test mode", status, res)
	}
}

// At most three secrets a provider: four are refused, and so is adding
// beyond three, which keeps those set; adding a secret set already changes
// nothing; replacing keeps only the new ones. No refusal quotes a secret.
func TestProviderSecretsLimit(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	set := func(add bool, secrets ...string) (int, error) {
		return h.app.Accounts.SetProviderSecrets(ctx, h.siteID, model.ProviderB, secrets, add)
	}
	held := func() []string {
		t.Helper()
		got, err := h.app.PG.ProviderSecrets(ctx, h.siteID, model.ProviderB)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	refused := func(what string, err error, secrets ...string) {
		t.Helper()
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != "secret" {
			t.Errorf("%s: %v, want invalid secret", what, err)
			return
		}
		for _, s := range secrets {
			if strings.Contains(e.Message, s) {
				t.Errorf("%s: the message %q quotes a secret", what, e.Message)
			}
		}
	}
	four := []string{"secret-one-1", "secret-two-2", "secret-three-3", "secret-four-4"}
	_, err := set(false, four...)
	refused("four secrets", err, four...)
	if n, err := set(false, "secret-one-1", "", "  secret-two-2\r"); err != nil || n != 2 {
		t.Fatalf("two secrets and a blank line: %d, %v", n, err)
	}
	if n, err := set(true, "secret-two-2"); err != nil || n != 2 {
		t.Errorf("adding a secret set already: %d, %v, want 2", n, err)
	}
	if n, err := set(true, "secret-three-3"); err != nil || n != 3 {
		t.Errorf("adding a third: %d, %v", n, err)
	}
	_, err = set(true, "secret-four-4")
	refused("a fourth added", err, "secret-four-4")
	_, err = set(false, "secret-ok-12", "short")
	refused("a short one among two", err, "short", "secret-ok-12")
	if got := held(); strings.Join(got, " ") != "secret-one-1 secret-two-2 secret-three-3" {
		t.Errorf("after refused changes the site holds %q", got)
	}
	if n, err := set(false, "secret-four-4"); err != nil || n != 1 {
		t.Errorf("replacing: %d, %v", n, err)
	}
	if got := held(); len(got) != 1 || got[0] != "secret-four-4" {
		t.Errorf("after replacing the site holds %q", got)
	}
}

var secretState = regexp.MustCompile(`<p class="secret-state" id="secret-state-provider_a">([^<]*)</p>`)

// The Settings page's secret field takes secrets one a line: Add keeps
// those set, Replace all does not, four lines (or a fourth added) are the
// page again with a 400 and the field empty. The page says how many are
// set, never what they are.
func TestSettingsWebhookSecrets(t *testing.T) {
	h := newHarness(t)
	w := newWebUser(t, h)
	w.login(h.email)
	settings := "/sites/" + string(h.siteID) + "/settings"
	w.expect(http.MethodGet, settings, nil, http.StatusOK)
	post := func(mode, secrets string, want int) string {
		t.Helper()
		form := url.Values{"csrf": {w.csrf}, "provider": {"provider_a"}, "secret": {secrets}}
		if mode != "" {
			form.Set("mode", mode)
		}
		return w.expect(http.MethodPost, "/sites/"+string(h.siteID)+"/secrets", form, want)
	}
	state := func(page string) string {
		t.Helper()
		m := secretState.FindStringSubmatch(page)
		if m == nil {
			t.Fatal("the page has no secret state for provider_a")
		}
		return m[1]
	}
	all := []string{"whsec_first_0001", "whsec_second_0002", "whsec_third_0003", "whsec_fourth_0004"}
	noSecret := func(what, page string) {
		t.Helper()
		for _, s := range all {
			if strings.Contains(page, s) {
				t.Errorf("%s: the page shows a secret", what)
			}
		}
	}
	if got := state(w.expect(http.MethodGet, settings, nil, http.StatusOK)); got != "not set" {
		t.Errorf("before: %q", got)
	}
	post("add", all[0]+"\r\n"+all[1]+"\r\n", http.StatusSeeOther)
	page := w.expect(http.MethodGet, settings+"?secret=1", nil, http.StatusOK)
	if got := state(page); !strings.HasPrefix(got, "2 secrets set") {
		t.Errorf("after adding two: %q", got)
	}
	noSecret("after adding two", page)
	post("", all[2], http.StatusSeeOther) // Enter in the field: the first button, Add
	if got := state(w.expect(http.MethodGet, settings, nil, http.StatusOK)); !strings.HasPrefix(got, "3 secrets set") {
		t.Errorf("after adding a third: %q", got)
	}
	page = post("add", all[3], http.StatusBadRequest)
	noSecret("a fourth added", page)
	if !strings.Contains(page, "at most 3 signing secrets") || !strings.HasPrefix(state(page), "3 secrets set") {
		t.Errorf("a fourth added: no error, or the state changed (%q)", state(page))
	}
	page = post("replace", strings.Join(all, "\n"), http.StatusBadRequest)
	noSecret("four lines", page)
	post("sideways", all[3], http.StatusBadRequest)
	post("replace", all[3], http.StatusSeeOther)
	if got := state(w.expect(http.MethodGet, settings, nil, http.StatusOK)); !strings.HasPrefix(got, "1 secret set") {
		t.Errorf("after replacing: %q", got)
	}
	got, err := h.app.PG.ProviderSecrets(context.Background(), h.siteID, model.ProviderA)
	if err != nil || len(got) != 1 || got[0] != all[3] {
		t.Errorf("the site holds %d secrets (%v), want the replacing one", len(got), err)
	}
}
