package app_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/pkg/client"
)

func apiError(t *testing.T, err error) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an API error", err)
	}
	return e
}

func wantError(t *testing.T, err error, status int, code, field string) {
	t.Helper()
	e := apiError(t, err)
	if e.Status != status || e.Code != code || e.Field != field {
		t.Errorf("got %d %q field %q (%s), want %d %q field %q", e.Status, e.Code, e.Field, e.Message, status, code, field)
	}
}

func TestLoginAndVerify(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	anon := h.client("")

	res, err := anon.Login(ctx, "OWNER@example.com", password)
	if err != nil {
		t.Fatal(err)
	}
	if res.User.ID != string(h.userID) || res.User.Email != h.email || res.User.Name != "Owner" {
		t.Errorf("login user = %+v", res.User)
	}
	if want := h.clock.Now().Add(7 * 24 * time.Hour); !res.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %v, want %v", res.ExpiresAt, want)
	}
	v, err := h.client(res.Token).Verify(ctx)
	if err != nil || !v.Authenticated || v.UserID != string(h.userID) || v.KeyID != "" {
		t.Errorf("verify with JWT = %+v, %v; want user_id only", v, err)
	}
	v, err = h.client(h.key).Verify(ctx)
	if err != nil || !v.Authenticated || v.KeyID != string(h.keyID) || v.UserID != "" || len(v.Scopes) != 5 {
		t.Errorf("verify with key = %+v, %v; want key_id and all scopes", v, err)
	}

	_, err = anon.Login(ctx, h.email, "wrong password")
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")
	wrongPassword := apiError(t, err).Message
	_, err = anon.Login(ctx, "nobody@example.com", password)
	wantError(t, err, http.StatusUnauthorized, "invalid_credentials", "")
	if apiError(t, err).Message != wrongPassword {
		t.Error("unknown email and wrong password must answer the same")
	}
	_, err = anon.Login(ctx, "", password)
	wantError(t, err, http.StatusBadRequest, "invalid_request", "email")
	_, err = anon.Login(ctx, h.email, "")
	wantError(t, err, http.StatusBadRequest, "invalid_request", "password")

	// The token expires exactly 7 days after issue.
	h.clock.Advance(7*24*time.Hour - time.Second)
	if _, err := h.client(res.Token).Verify(ctx); err != nil {
		t.Errorf("token refused a second before expiry: %v", err)
	}
	h.clock.Advance(time.Second)
	_, err = h.client(res.Token).Verify(ctx)
	wantError(t, err, http.StatusUnauthorized, "unauthorized", "")
}

func TestBadCredentials(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	res, err := h.client("").Login(ctx, h.email, password)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(res.Token, ".")
	for name, token := range map[string]string{
		"none":             "",
		"garbage":          "hello",
		"malformed key":    "sk_test_tooshort",
		"unknown key":      "sk_test_" + strings.Repeat("a", 40),
		"live key on test": "sk_live_" + h.key[len("sk_test_"):],
		"alg none":         "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".",
		"bad signature":    parts[0] + "." + parts[1] + ".c2lnbmF0dXJl",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.client(token).Verify(ctx)
			wantError(t, err, http.StatusUnauthorized, "unauthorized", "")
		})
	}
	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/auth/verify", nil)
	req.Header.Set("Authorization", "Basic "+h.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Basic scheme: status %d, want 401", resp.StatusCode)
	}
}

// A revoked key fails on the very next request, on every instance, even one
// that has the key cached.
func TestRevocationReachesEveryInstance(t *testing.T) {
	h := newHarness(t)
	other := h.secondInstance()
	ctx := context.Background()
	for _, inst := range []*harness{h, other} {
		for range 3 { // warm each instance's key cache
			if _, err := inst.client(h.key).Verify(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := h.app.Accounts.RevokeKey(ctx, h.keyID); err != nil {
		t.Fatal(err)
	}
	for i, inst := range []*harness{h, other} {
		_, err := inst.client(h.key).Verify(ctx)
		if e := apiError(t, err); e.Status != http.StatusUnauthorized {
			t.Errorf("instance %d: revoked key answered %d", i, e.Status)
		}
	}
}

func TestKeyExpiryAndScopes(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	exp := h.clock.Now().Add(time.Hour)
	k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "short-lived",
		Scopes: []model.Scope{model.ScopeStatsRead}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.client(k.Secret).Verify(ctx)
	if err != nil || len(v.Scopes) != 1 || v.Scopes[0] != "stats:read" {
		t.Fatalf("verify = %+v, %v", v, err)
	}
	// A key without events:write may not send events.
	_, err = h.client(k.Secret).Pageview(ctx, pageview(h, "https://example.com/"))
	wantError(t, err, http.StatusForbidden, "forbidden", "")

	h.clock.Advance(time.Hour)
	_, err = h.client(k.Secret).Verify(ctx)
	wantError(t, err, http.StatusUnauthorized, "unauthorized", "")

	// an expiry no timestamp can write (10000-01-01 01:00 UTC) is refused;
	// one in another zone is the same instant
	far := time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("-02", -2*3600))
	_, err = h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "far", ExpiresAt: &far})
	if e := (*errs.Error)(nil); !errors.As(err, &e) || e.Field != "expires_at" {
		t.Errorf("an expiry in the year 10000 UTC: %v, want invalid expires_at", err)
	}
	near := time.Date(2200, 1, 1, 0, 0, 0, 0, time.FixedZone("+02", 2*3600))
	if k, err := h.app.Accounts.CreateKey(ctx, accounts.NewKey{OwnerEmail: h.email, Name: "near", ExpiresAt: &near}); err != nil ||
		k.Key.ExpiresAt == nil || !k.Key.ExpiresAt.Equal(near) {
		t.Errorf("an expiry in +02: %+v, %v; want the same instant", k.Key.ExpiresAt, err)
	}
}
